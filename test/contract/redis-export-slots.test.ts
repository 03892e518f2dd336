import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { RawHttpClient, eventually } from '../support/raw-http.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { redisLimits } from '../../src/limits/redis/limits.ts'

const EXPORT = '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31'

/**
 * With REDIS_URL the exports running at once are bounded across every process sharing the
 * Redis (docs/operations.md#the-running-exports-in-redis): two app instances on one data
 * directory and one real redis-server, with real exports whose readers do not read.
 */
describe.skipIf(!redisAvailable())('exports running at once, shared through Redis', () => {
  let redis: RedisServer
  let one: TestServer
  let two: TestServer
  let token: string
  const held: RawHttpClient[] = []
  const limits = () =>
    redisLimits({ url: redis.url, limit: 60, dailyQuota: 50, exports: { perToken: 2, max: 10 }, connection: { commandTimeoutMs: 300, connectTimeoutMs: 300 } })

  beforeAll(async () => {
    redis = await startRedis()
    one = await startServer({ exportStallTimeoutMs: 60_000 }, { limits })
    two = await startServer({ exportStallTimeoutMs: 60_000 }, { limits, dataDir: one.dataDir })
    token = one.seeded({ bulk: { count: 100_000 } }).token
  })
  afterAll(async () => {
    for (const client of held) client.destroy()
    await two?.close()
    await one?.close()
    await redis?.stop()
  })

  const start = async (server: TestServer) => {
    const client = await RawHttpClient.get(server.base, EXPORT, { Authorization: `Bearer ${token}` }, { paused: true })
    held.push(client)
    return client
  }
  const leased = (server: TestServer, n: number) => eventually(() => server.app.pool.stats().leased === n, 5000, `${n} running exports`)
  const running = () => Number(redis.cli('ZCARD', 'limits:exports:all'))

  test('one export on each instance: a third on either is 429 too_many_exports, uncounted', async () => {
    const first = await start(one)
    await start(two)
    await leased(one, 1)
    await leased(two, 1)
    for (const server of [one, two]) {
      const refused = await server.get(EXPORT, token)
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('5')
      expect(((await refused.json()) as { error: string; message: string }).message).toContain('already runs 2 exports')
      // The window is shared as well: the two running exports counted, the refused ones not.
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('58')
    }
    // An export that ends gives its slot back (not awaited: the next claim may race it).
    first.destroy()
    await leased(one, 0)
    await eventually(() => running() === 1, 5000, 'the slot given back in Redis')
    await start(two)
    await leased(two, 2)
  })

  test('Redis stopped: an export is 503 limits_unavailable with Retry-After: 1, and nothing is counted after SIGCONT', async () => {
    for (const client of held.splice(0)) client.destroy()
    await leased(one, 0)
    await leased(two, 0)
    await eventually(() => running() === 0, 5000, 'every slot given back')
    const before = await one.get('/v1/queues', token)
    await before.arrayBuffer()
    const remainingBefore = Number(before.headers.get('x-ratelimit-remaining'))

    redis.pause()
    try {
      const refused = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? two : one).get(EXPORT, token)))
      for (const response of refused) {
        expect(response.status).toBe(503)
        expect(response.headers.get('retry-after')).toBe('1')
        expect(((await response.json()) as { error: string }).error).toBe('limits_unavailable')
      }
    } finally {
      redis.resume()
    }
    await eventually(() => redis.cli('PING') === 'PONG', 5000, 'Redis to answer again')
    for (const server of [one, two]) {
      const giveUpAt = Date.now() + 5000
      while ((await server.get('/readyz')).status !== 200) {
        if (Date.now() > giveUpAt) throw new Error('the limits did not recover')
      }
    }
    // The claims Redis ran after SIGCONT were past their deadline: no slot, no window entry.
    expect(running()).toBe(0)
    expect(redis.cli('KEYS', 'limits:exports:*')).toBe('')
    const after = await one.get('/v1/queues', token)
    await after.arrayBuffer()
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBe(remainingBefore - 1)
    await start(one)
    await start(two)
    await leased(one, 1)
    await leased(two, 1)
    expect((await one.get(EXPORT, token)).status).toBe(429)
  })
})
