import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { eventually } from '../support/raw-http.ts'

/**
 * HTTP around the operations (docs/api.md#http-details): paths match exactly, HEAD is GET
 * without the body and counts like it, other methods are 405.
 */
let server: TestServer
let token: string
let demoToken: string
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 10, demoDailyQuota: 3 })
  token = server.seeded().token
  demoToken = server.seeded({ plan: 'demo' }).token
})
afterAll(() => server.close())

const bearer = (value: string) => ({ Authorization: `Bearer ${value}` })
const TICKETS = '/v1/tickets?from=2026-03-01&to=2026-03-05&limit=2'
const EXPORT = '/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-05'
/** Headers that differ between any two answers, or that count: left out of the comparison. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'x-changes-token'])
const comparable = (response: Response) => Object.fromEntries([...response.headers].filter(([name]) => !PER_ANSWER.has(name)).sort())

describe('a trailing slash is another path', () => {
  test('/v1/queues/, /v1/tickets/, /v1/exports/tickets.csv/ and /healthz/ are 404 not_found, with or without a token, and count nothing', async () => {
    server.clock.advance(120_000)
    for (const path of ['/v1/queues/', '/v1/tickets/?from=2026-03-01&to=2026-03-05', '/v1/exports/tickets.csv/', '/healthz/', '/v1/']) {
      for (const auth of [null, token]) {
        const response = await server.get(path, auth)
        expect({ path, status: response.status }).toEqual({ path, status: 404 })
        expect(((await response.json()) as { error: string }).error).toBe('not_found')
      }
    }
    const after = await server.get('/v1/queues', token)
    expect(after.headers.get('x-ratelimit-remaining')).toBe('9')
  })
})

describe('HEAD is GET without the body', () => {
  test('on every path where GET works: the same status and headers, no body', async () => {
    server.clock.advance(120_000)
    const cases: [string, string | null][] = [
      ['/v1/queues', token], [TICKETS, token], [EXPORT, token], ['/v1/queues', null], [`${TICKETS}&nope=1`, token],
      ['/healthz', null], ['/readyz', null], ['/', null], ['/docs', null], ['/openapi.json', null],
    ]
    for (const [path, auth] of cases) {
      const get = await server.get(path, auth)
      const getBody = await get.arrayBuffer()
      const head = await fetch(server.base + path, { method: 'HEAD', headers: auth ? bearer(auth) : {} })
      expect({ path, status: head.status }).toEqual({ path, status: get.status })
      expect({ path, headers: comparable(head) }).toEqual({ path, headers: comparable(get) })
      expect((await head.arrayBuffer()).byteLength).toBe(0)
      expect(getBody.byteLength).toBeGreaterThan(0)
    }
    // An export's snapshot is let go when its HEAD is answered: nothing left in flight.
    await eventually(() => server.app.inFlight() === 0, 5000, 'nothing in flight')
  })

  test('counted alike: against the minute window, and against the demo quota', async () => {
    server.clock.advance(120_000)
    const remaining = async (method: string, auth: string) =>
      (await fetch(server.base + '/v1/queues', { method, headers: bearer(auth) })).headers.get('x-ratelimit-remaining')
    expect(await remaining('HEAD', token)).toBe('9')
    expect(await remaining('GET', token)).toBe('8')
    expect(await remaining('HEAD', token)).toBe('7')
    // The demo organisation's day allows 3: two HEADs and a GET use it up.
    expect((await fetch(server.base + '/v1/queues', { method: 'HEAD', headers: bearer(demoToken) })).status).toBe(200)
    expect((await server.get('/v1/queues', demoToken)).status).toBe(200)
    expect((await fetch(server.base + '/v1/queues', { method: 'HEAD', headers: bearer(demoToken) })).status).toBe(200)
    const spent = await fetch(server.base + '/v1/queues', { method: 'HEAD', headers: bearer(demoToken) })
    expect(spent.status).toBe(429)
    expect(spent.headers.get('retry-after')).not.toBeNull()
    expect(((await (await server.get('/v1/queues', demoToken)).json()) as { error: string }).error).toBe('demo_quota_exceeded')
  })

  test('logged as HEAD, once', async () => {
    const id = 'head-logged-1'
    await fetch(server.base + '/v1/queues', { method: 'HEAD', headers: { ...bearer(token), 'X-Request-Id': id } })
    const lines = server.logger.lines.map((line) => JSON.parse(line)).filter((line) => line.event === 'request' && line.requestId === id)
    expect(lines).toEqual([expect.objectContaining({ method: 'HEAD', path: '/v1/queues' })])
  })
})

describe('other methods', () => {
  test('405 method_not_allowed with Allow: GET, HEAD on a known path, 404 on an unknown one, without a token', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const known = await fetch(server.base + '/v1/queues', { method, headers: bearer(token) })
      expect({ method, status: known.status, allow: known.headers.get('allow') }).toEqual({ method, status: 405, allow: 'GET, HEAD' })
      expect(((await known.json()) as { error: string }).error).toBe('method_not_allowed')
      expect((await fetch(server.base + '/v1/queues/', { method })).status).toBe(404)
    }
  })
})
