import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { MemoryRateLimiter } from '../../src/limits/memory-limiter.ts'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { startServer, type TestServer } from '../support/harness.ts'
import { RawHttpClient, eventually } from '../support/raw-http.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'

/** Every error body has exactly the shape of docs/api.md#errors. */
async function expectErrorShape(response: Response, status: number, code: string) {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toBe('application/json')
  expect(response.headers.get('cache-control')).toBe('no-store')
  expect(response.headers.get('x-content-type-options')).toBe('nosniff')
  const body = (await response.json()) as Record<string, unknown>
  expect(body.error).toBe(code)
  expect(typeof body.message).toBe('string')
  expect((body.message as string).length).toBeGreaterThan(10)
  expect(body.requestId).toBe(response.headers.get('x-request-id')!)
  return body
}

describe('routing and error bodies', () => {
  let server: TestServer
  let token: string
  let orgId: string

  beforeAll(async () => {
    server = await startServer()
    ;({ token, org: { id: orgId } } = server.organisation())
  })
  afterAll(() => server.close())

  test('an unknown path with a token: 404, counting nothing', async () => {
    const response = await server.get('/v1/queues/extra', token)
    await expectErrorShape(response, 404, 'not_found')
    expect((server.app.limits.limiter as MemoryRateLimiter).size).toBe(0)
  })

  test('X-Request-Id: a plain client id is echoed, anything else replaced', async () => {
    const echoed = await server.get('/healthz', null, { 'X-Request-Id': 'loader-run-42' })
    expect(echoed.headers.get('x-request-id')).toBe('loader-run-42')
    const replaced = await server.get('/healthz', null, { 'X-Request-Id': '<script>' + 'x'.repeat(100) })
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    // A token's secret part, whatever its prefix, is neither echoed nor logged.
    const secret = token.slice(4)
    for (const id of [`svc-${secret}`, `svc__${secret}`, secret, `run.${secret}`]) {
      const answer = await server.get('/v1/queues', token, { 'X-Request-Id': id })
      expect({ id, echoed: answer.headers.get('x-request-id') }).toEqual({ id, echoed: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    }
    expect(server.logger.lines.join('\n')).not.toContain(secret.slice(0, 12))
  })

  test("a short Host header (a proxy's 'Host: api') still routes", async () => {
    for (const host of ['t', 'api', '10.0.0.1:8080']) {
      const client = await RawHttpClient.get(server.base, '/v1/queues', { Host: host, Authorization: `Bearer ${token}` })
      await eventually(() => client.text().includes('\r\n\r\n'), 5000, 'an answer')
      expect({ host, status: client.text().split('\r\n')[0] }).toEqual({ host, status: 'HTTP/1.1 200 OK' })
      client.destroy()
    }
  })

  test('healthz and readyz answer without a token', async () => {
    expect(await (await server.get('/healthz')).json()).toEqual({ status: 'ok' })
    expect(await (await server.get('/readyz')).json()).toEqual({ status: 'ready' })
  })

  test('missing tenant file: 503 data_unavailable with rate-limit headers, never an empty result', async () => {
    const { org, token: brokenToken } = server.organisation()
    rmSync(tenantFilePath(server.dataDir, org.id))
    for (const path of ['/v1/queues', '/v1/tickets?from=2026-03-01&to=2026-03-02', '/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-02']) {
      const response = await server.get(path, brokenToken)
      await expectErrorShape(response, 503, 'data_unavailable')
      expect(response.headers.get('x-ratelimit-remaining')).not.toBeNull()
      const id = response.headers.get('x-request-id')
      const line = server.logger.lines.map((l) => JSON.parse(l)).find((l) => l.event === 'request' && l.requestId === id)
      expect(line).toMatchObject({ status: 503, error: 'data_unavailable' })
    }
    // The other organisation is unaffected.
    expect((await server.get('/v1/queues', token)).status).toBe(200)
    const logged = server.logger.lines.filter((l) => l.includes('tenant_unavailable') && l.includes(org.id))
    expect(logged).toHaveLength(1)
    void orgId
  })

  test('a 503 data_unavailable names the kind of failure, and the pool logs its reason under the same request id', async () => {
    const { org, token: brokenToken } = server.organisation()
    rmSync(tenantFilePath(server.dataDir, org.id))
    const response = await server.get('/v1/queues', brokenToken, { 'X-Request-Id': 'missing-file-1' })
    const body = await expectErrorShape(response, 503, 'data_unavailable')
    expect(body.message as string).toContain('(its data file is missing)')
    expect(body.message as string).not.toContain(server.dataDir)
    const logged = server.logger.lines.map((l) => JSON.parse(l)).filter((l) => l.event === 'tenant_unavailable' && l.organisationId === org.id)
    expect(logged).toEqual([expect.objectContaining({ requestId: 'missing-file-1', reason: 'tenant file missing' })])
  })

  test('a file of a schema version this release does not know: the 503 says so in words', async () => {
    const { org, token: newerToken } = server.organisation()
    const db = new Database(tenantFilePath(server.dataDir, org.id))
    db.exec('PRAGMA user_version = 99')
    db.close()
    const body = await expectErrorShape(await server.get('/v1/queues', newerToken), 503, 'data_unavailable')
    expect(body.message).toBe("The organisation's data cannot be read right now (its data file has a schema version this release does not know); try again later.")
  })

  test('access log: one JSON line per request, with ids and never the token', async () => {
    server.logger.lines.length = 0
    await server.get('/v1/queues?svc_leak=svc_abcdefghijklmnopqrstuvwxyz', token, { 'X-Request-Id': 'log-check' })
    const lines = server.logger.lines.map((l) => JSON.parse(l))
    const access = lines.find((l) => l.event === 'request' && l.requestId === 'log-check')
    expect(access).toMatchObject({ method: 'GET', path: '/v1/queues', status: 400, organisationId: orgId })
    expect(access.tokenId).toMatch(/^tok_/)
    expect(typeof access.durationMs).toBe('number')
    expect(server.logger.lines.join('\n')).not.toContain(token)
    expect(server.logger.lines.join('\n')).not.toContain('svc_abcdefghijklmnopqrstuvwxyz')
  })
})

describe('access log of answers given after the token was recognised', () => {
  test('402 and both 429s name the organisation and the token', async () => {
    const server = await startServer({ rateLimitPerMinute: 1, demoDailyQuota: 1 })
    const disabled = server.organisation({ apiEnabled: false })
    const paid = server.organisation()
    const demo = server.organisation({ plan: 'demo' })
    const accessLine = (requestId: string) => server.logger.lines.map((l) => JSON.parse(l)).find((l) => l.event === 'request' && l.requestId === requestId)
    const call = async (token: string, requestId: string, status: number) => {
      expect((await server.get('/v1/queues', token, { 'X-Request-Id': requestId })).status).toBe(status)
      return accessLine(requestId)
    }
    expect(await call(disabled.token, 'log-402', 402)).toMatchObject({ status: 402, error: 'api_not_enabled', organisationId: disabled.org.id, tokenId: expect.stringMatching(/^tok_/) })
    await call(paid.token, 'log-200', 200)
    expect(await call(paid.token, 'log-429', 429)).toMatchObject({ status: 429, error: 'rate_limited', organisationId: paid.org.id, tokenId: expect.stringMatching(/^tok_/) })
    await call(demo.token, 'log-demo-200', 200)
    server.clock.advance(61_000) // the minute passes; the day's one request is spent
    expect(await call(demo.token, 'log-quota', 429)).toMatchObject({ status: 429, error: 'demo_quota_exceeded', organisationId: demo.org.id, tokenId: expect.stringMatching(/^tok_/) })
    expect((await call(paid.token, 'log-200-again', 200)).error).toBeUndefined()
    await server.close()
  })
})

describe('unexpected failures', () => {
  test('500 says nothing internal; the log has the detail', async () => {
    const server = await startServer()
    const { token } = server.organisation()
    // An operator's mistake under the running server: the token table is gone.
    const control = new Database(join(server.dataDir, 'control.sqlite'))
    control.exec('ALTER TABLE api_tokens RENAME TO api_tokens_gone')
    const response = await server.get('/v1/queues', token)
    const body = await expectErrorShape(response, 500, 'internal')
    expect(JSON.stringify(body)).not.toMatch(/sqlite|select|\/tmp|at .*\.ts/i)
    expect(server.logger.lines.some((l) => l.includes('unhandled_error') && l.includes(body.requestId as string))).toBe(true)
    expect((await server.get('/readyz')).status).toBe(200)
    control.exec('ALTER TABLE organisations RENAME TO organisations_gone')
    await expectErrorShape(await server.get('/readyz'), 503, 'data_unavailable')
    control.close()
    await server.close()
  })
})
