import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { RawHttpClient, eventually } from '../support/raw-http.ts'
import { errorFromResponse, TooManyExportsError } from '../../src/client/errors.ts'

const EXPORT = '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31'

/**
 * EXPORTS_PER_TOKEN and EXPORTS_MAX bound the exports running at once; more are answered 429
 * too_many_exports with Retry-After, and like any 429 consume nothing (docs/api.md#exports-running-at-once).
 * The running exports are real ones whose readers do not read (their snapshots stay open).
 */
describe('exports running at once', () => {
  let server: TestServer
  let organisationId: string
  let token: string
  const held: RawHttpClient[] = []

  beforeAll(async () => {
    server = await startServer({ exportsPerToken: 2, exportsMax: 3, exportStallTimeoutMs: 60_000 })
    const seeded = server.seeded({ bulk: { count: 100_000 } })
    organisationId = seeded.org.id
    token = seeded.token
  })
  afterAll(async () => {
    for (const client of held) client.destroy()
    await server.close()
  })

  const start = async (bearer: string) => {
    const client = await RawHttpClient.get(server.base, EXPORT, { Authorization: `Bearer ${bearer}` }, { paused: true })
    held.push(client)
    return client
  }
  const leased = (n: number) => eventually(() => server.app.pool.stats().leased === n, 5000, `${n} running exports`)

  test('a token over EXPORTS_PER_TOKEN: 429 too_many_exports, Retry-After, the JSON body, nothing consumed', async () => {
    const first = await start(token)
    await start(token)
    await leased(2)
    const refused = await server.get(EXPORT, token)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/json')
    expect(refused.headers.get('retry-after')).toBe('5')
    const body = (await refused.clone().json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['error', 'message', 'requestId', 'retryAfter'])
    expect(body).toMatchObject({ error: 'too_many_exports', retryAfter: 5, requestId: refused.headers.get('x-request-id') })
    expect(String(body.message)).toContain('(2)')
    const line = server.logger.lines.map((l) => JSON.parse(l)).find((l) => l.event === 'request' && l.requestId === body.requestId)
    expect(line).toMatchObject({ status: 429, error: 'too_many_exports' })
    // The two running exports counted; the refused one did not: the window shows 58 left, and
    // the next counted request 57.
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('58')
    const error = await errorFromResponse(refused)
    expect(error).toBeInstanceOf(TooManyExportsError)
    expect((error as TooManyExportsError).retryAfterSeconds).toBe(5)
    const page = await server.get('/v1/queues', token)
    expect(page.headers.get('x-ratelimit-remaining')).toBe('57')
    await page.arrayBuffer()

    // An export that ends gives its slot back.
    first.destroy()
    await leased(1)
    const again = await start(token)
    await leased(2)
    expect(again.text()).toBe('') // paused: nothing read yet, but running (leased)
  })

  test('over EXPORTS_MAX in all: 429 too_many_exports for any token', async () => {
    const other = server.token(organisationId, 'second loader').token
    await start(other) // the third running export
    await leased(3)
    const refused = await server.get(EXPORT, server.token(organisationId, 'third loader').token)
    expect(refused.status).toBe(429)
    const body = (await refused.json()) as Record<string, unknown>
    expect(body).toMatchObject({ error: 'too_many_exports', retryAfter: 5 })
    expect(String(body.message)).toContain('(3)')
  })

  test('an export refused before its first byte (400) or by the window gives its slot back at once', async () => {
    for (const client of held) client.destroy()
    await leased(0)
    const fresh = server.token(organisationId, 'fourth loader').token
    for (let i = 0; i < 3; i++) expect((await server.get('/v1/exports/tickets.csv?from=2026-01-02&to=2026-01-01', fresh)).status).toBe(400)
    for (let i = 0; i < 57; i++) await (await server.get('/v1/queues', fresh)).arrayBuffer()
    for (let i = 0; i < 3; i++) {
      const refused = await server.get(EXPORT, fresh)
      expect((await refused.json()) as object).toMatchObject({ error: 'rate_limited' })
    }
    server.clock.advance(61_000)
    // Had any of those six kept its slot, this token could not run two exports now.
    await start(fresh)
    await start(fresh)
    await leased(2)
    expect((await (await server.get(EXPORT, fresh)).json()) as object).toMatchObject({ error: 'too_many_exports' })
  })

  test("a demo organisation's refused export takes nothing from its day either", async () => {
    for (const client of held) client.destroy()
    await leased(0)
    const demo = server.seeded({ plan: 'demo', bulk: { count: 100_000 } }).token
    await start(demo)
    await start(demo)
    await leased(2)
    const refused = await server.get(EXPORT, demo)
    expect(((await refused.json()) as { error: string }).error).toBe('too_many_exports')
    expect(refused.headers.get('ratelimit')).toMatch(/^"minute";r=58;t=60, "day";r=48;t=\d+$/)
    const page = await server.get('/v1/queues', demo)
    await page.arrayBuffer()
    expect(page.headers.get('ratelimit')).toContain('"day";r=47;')
  })
})
