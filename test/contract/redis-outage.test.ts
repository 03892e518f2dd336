import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { eventually } from '../support/raw-http.ts'

/**
 * REDIS_URL set, over real HTTP: the limits fail closed while Redis is down and heal by
 * themselves when it returns. Redis is killed (SIGKILL) mid-load and started again on the same
 * port, empty.
 */
const available = redisAvailable()

describe.skipIf(!available)('Redis down under load: the limits fail closed, then heal', () => {
  let redis: RedisServer
  let server: TestServer
  let paid: string
  let demo: string
  let disabled: string

  beforeAll(async () => {
    redis = await startRedis()
    server = await startServer({ redisUrl: redis.url, rateLimitPerMinute: 1_000_000, demoDailyQuota: 1_000_000 })
    paid = server.seeded().token
    demo = server.seeded({ plan: 'demo' }).token
    disabled = server.organisation({ apiEnabled: false }).token
  })
  afterAll(async () => {
    await server?.close()
    await redis?.stop()
  })

  const outageLines = () => server.logger.lines.filter((line) => /"event":"limits_(unavailable|recovered)"/.test(line))

  test('every /v1 answer is 200 or 503 limits_unavailable, none slow; /readyz 503 while down; 200s return once Redis is back', async () => {
    const seen = new Map<string, number>()
    let slowest = 0
    let stop = false
    /** A client asking again as soon as it has its answer, as a loader would. */
    const client = async (token: string) => {
      while (!stop) {
        const started = performance.now()
        const response = await server.get('/v1/queues', token)
        const body = (await response.json()) as { error?: string }
        slowest = Math.max(slowest, performance.now() - started)
        const outcome = response.status === 200 ? '200' : `${response.status} ${body.error} retry-after=${response.headers.get('retry-after')}`
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
        if (response.status !== 200) await Bun.sleep(5)
      }
    }
    const clients = [...Array.from({ length: 6 }, () => client(paid)), ...Array.from({ length: 2 }, () => client(demo))]
    try {
      await Bun.sleep(300)
      expect(seen.get('200')).toBeGreaterThan(0)
      expect((await server.get('/readyz')).status).toBe(200)

      await redis.kill()
      await eventually(() => (seen.get('503 limits_unavailable retry-after=1') ?? 0) > 20, 5000, 'refusals while Redis is down')
      expect((await server.get('/readyz')).status).toBe(503)
      // What needs no limit is still answered.
      expect((await server.get('/v1/queues', 'svc_not_a_token')).status).toBe(401)
      expect((await server.get('/v1/queues', disabled)).status).toBe(402)
      expect((await server.get('/healthz')).status).toBe(200)
      expect((await server.get('/')).status).toBe(200)
      const refusedWhileDown = seen.get('503 limits_unavailable retry-after=1')!
      await Bun.sleep(300)
      expect(seen.get('503 limits_unavailable retry-after=1')!).toBeGreaterThan(refusedWhileDown)

      await redis.start()
      const before = seen.get('200')!
      await eventually(() => seen.get('200')! > before + 20, 5000, '200s after Redis is back')
      expect((await server.get('/readyz')).status).toBe(200)
    } finally {
      stop = true
      await Promise.all(clients)
    }
    expect([...seen.keys()].sort()).toEqual(['200', '503 limits_unavailable retry-after=1'])
    expect(slowest).toBeLessThan(3000)
    // One line when the outage began, one when it ended: not one per refused request.
    expect(outageLines().map((line) => JSON.parse(line).event)).toEqual(['limits_unavailable', 'limits_recovered'])
  }, 30_000)

  test('after the restart (an empty Redis) the window counts from zero again, exactly', async () => {
    const { token } = server.seeded()
    const remaining: number[] = []
    for (let i = 0; i < 3; i++) remaining.push(Number((await server.get('/v1/queues', token)).headers.get('x-ratelimit-remaining')))
    expect(remaining).toEqual([999_999, 999_998, 999_997])
  })

  test("the Redis URL's password is never logged", async () => {
    const dead = await startRedis()
    await dead.stop()
    const secret = 'pa55-never-logged'
    const other = await startServer({ redisUrl: `redis://:${secret}@127.0.0.1:${dead.port}` })
    try {
      const response = await other.get('/v1/queues', other.seeded().token)
      expect(response.status).toBe(503)
      expect(other.logger.lines.some((line) => line.includes('"event":"limits_unavailable"'))).toBe(true)
      expect(other.logger.lines.join('\n')).not.toContain(secret)
    } finally {
      await other.close()
    }
  })
})
