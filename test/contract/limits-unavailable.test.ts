import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLimits } from '../../src/limits/index.ts'
import type { DemoQuota, RateLimiter } from '../../src/limits/types.ts'
import { configWith } from '../../src/config/config.ts'
import { startServer, type TestServer } from '../support/harness.ts'

/** Makes every call of a seam throw while `broken.on` is set, as an engine that cannot be reached. */
function breakable<T extends object>(target: T, broken: { on: boolean }): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver)
      if (typeof value !== 'function' || key === 'close') return value
      return (...args: unknown[]) => (broken.on ? Promise.reject(new Error('engine unreachable')) : value.apply(object, args))
    },
  })
}

describe('the limits fail closed: 503 limits_unavailable', () => {
  let server: TestServer
  const limiterDown = { on: false }
  const quotaDown = { on: false }
  let paid: string
  let demo: string
  let disabled: string

  beforeAll(async () => {
    server = await startServer({}, {
      limits: (store, clock) => {
        const limits = createLimits(configWith({ dataDir: store.dataDir }), { store, clock })
        return { ...limits, limiter: breakable<RateLimiter>(limits.limiter, limiterDown), quota: breakable<DemoQuota>(limits.quota, quotaDown) }
      },
    })
    paid = server.seeded().token
    demo = server.seeded({ plan: 'demo' }).token
    disabled = server.organisation({ apiEnabled: false }).token
  })
  afterAll(() => server.close())

  const outageLines = () => server.logger.lines.filter((line) => /"event":"limits_(unavailable|recovered)"/.test(line))

  test('limiter down: /v1 answers 503 with Retry-After: 1, logged once; 401 and 402 and the pages outside /v1 still answer', async () => {
    limiterDown.on = true
    for (let i = 0; i < 3; i++) {
      const response = await server.get('/v1/queues', paid)
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('1')
      const body = (await response.json()) as Record<string, unknown>
      expect(body).toMatchObject({ error: 'limits_unavailable', requestId: response.headers.get('x-request-id') })
      expect(body.message).toBeString()
      const line = server.logger.lines.map((l) => JSON.parse(l)).find((l) => l.event === 'request' && l.requestId === body.requestId)
      expect(line).toMatchObject({ status: 503, error: 'limits_unavailable' })
    }
    expect((await server.get('/v1/queues', 'svc_not_a_token')).status).toBe(401)
    const refused = await server.get('/v1/queues', disabled)
    expect(refused.status).toBe(402)
    expect(refused.headers.get('x-ratelimit-remaining')).toBeNull() // the window cannot be read: not shown
    expect((await server.get('/readyz')).status).toBe(503)
    expect((await server.get('/healthz')).status).toBe(200)
    expect((await server.get('/')).status).toBe(200)
    expect(outageLines()).toHaveLength(1)
    expect(outageLines()[0]).toContain('engine unreachable')

    limiterDown.on = false
    const healed = await server.get('/v1/queues', paid)
    expect(healed.status).toBe(200)
    expect((await server.get('/readyz')).status).toBe(200)
    expect(outageLines()).toHaveLength(2)
    expect(outageLines()[1]).toContain('"event":"limits_recovered"')
  })

  test("quota down: a demo organisation's request is 503 and gives its window slot back", async () => {
    const before = Number((await server.get('/v1/queues', demo)).headers.get('x-ratelimit-remaining'))
    quotaDown.on = true
    expect((await server.get('/v1/queues', demo)).status).toBe(503)
    expect((await server.get('/v1/queues', paid)).status).toBe(200) // a paid organisation needs no quota
    quotaDown.on = false
    const after = await server.get('/v1/queues', demo)
    expect(after.status).toBe(200)
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBe(before - 1)
  })
})
