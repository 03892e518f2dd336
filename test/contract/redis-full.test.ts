import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'

const EXPORT = '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31'

/**
 * A full Redis (`maxmemory` reached, `maxmemory-policy noeviction`) over real HTTP: the limits
 * fail closed (503 limits_unavailable) and nothing is written past `maxmemory`
 * (docs/operations.md#how-the-limits-are-kept-in-redis). Redis checks memory before every
 * command of a script declared with a shebang, so the window's script is refused whole instead
 * of trimming (which frees memory and passes) and then adding its member.
 */
describe.skipIf(!redisAvailable())('a full Redis under noeviction', () => {
  let redis: RedisServer
  let server: TestServer
  let paid: { org: { id: string }; token: string }
  let demo: { org: { id: string }; token: string }

  beforeAll(async () => {
    redis = await startRedis()
    server = await startServer({ redisUrl: redis.url })
    paid = server.seeded()
    demo = server.seeded({ plan: 'demo' })
  })
  afterAll(async () => {
    await server?.close()
    await redis?.stop()
  })

  const usedMemory = () => Number(/used_memory:(\d+)/.exec(redis.cli('INFO', 'memory'))![1])
  /** Every key of the limits with what it holds, so that any write shows. */
  const limitsKeys = () => {
    const keys = redis.cli('--scan', '--pattern', 'limits:*').split('\n').filter(Boolean).sort()
    return keys.map((key) => `${key} ${redis.cli('TYPE', key) === 'zset' ? redis.cli('ZRANGE', key, '0', '-1') : redis.cli('GET', key)}`)
  }

  test('every counted request is 503 limits_unavailable and no key of the limits changes; freeing memory heals it', async () => {
    // Keys of the limits exist before Redis fills up: a window per token and the demo's day.
    expect((await server.get('/v1/queues', paid.token)).status).toBe(200)
    expect((await server.get('/v1/queues', demo.token)).status).toBe(200)
    const before = limitsKeys()
    expect(before.length).toBe(3)

    // Full: the limit well under what Redis holds now (which moves by kilobytes as clients come
    // and go), nothing to evict.
    redis.cli('CONFIG', 'SET', 'maxmemory-policy', 'noeviction')
    redis.cli('CONFIG', 'SET', 'maxmemory', String(Math.floor(usedMemory() / 2)))

    for (const [path, token] of [
      ['/v1/queues', paid.token],
      ['/v1/queues', demo.token],
      ['/v1/tickets?from=2026-01-01&to=2026-03-31', paid.token],
      [EXPORT, paid.token],
    ] as const) {
      const response = await server.get(path, token)
      expect({ path, status: response.status, body: await response.json() }).toMatchObject({ path, status: 503, body: { error: 'limits_unavailable' } })
      expect(response.headers.get('retry-after')).toBe('1')
    }
    expect(limitsKeys()).toEqual(before)
    // Not ready: the readiness check runs a script declared like the others, which Redis refuses too.
    expect((await server.get('/readyz')).status).toBe(503)

    // Memory back: the same requests are served and counted again.
    redis.cli('CONFIG', 'SET', 'maxmemory', '0')
    expect((await server.get('/v1/queues', paid.token)).status).toBe(200)
    const demoAgain = await server.get('/v1/queues', demo.token)
    expect(demoAgain.status).toBe(200)
    expect(demoAgain.headers.get('ratelimit')).toContain('"day";r=')
  })
})
