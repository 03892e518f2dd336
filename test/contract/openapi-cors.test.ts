import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Value } from '@sinclair/typebox/value'
import { startServer, type TestServer } from '../support/harness.ts'
import { TICKET_PARAMETERS } from '../../src/contract/vocabulary.ts'
import { QueuesResponseSchema, TicketPageSchema, ErrorSchema, RateLimitedSchema, DemoQuotaSchema } from '../../src/contract/schemas.ts'

let server: TestServer
let token: string
let demoToken: string
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 5, demoDailyQuota: 1 })
  token = server.seeded().token
  demoToken = server.organisation({ plan: 'demo' }).token
})
afterAll(() => server.close())

describe('GET /openapi.json', () => {
  test('is a valid OpenAPI 3.1 document (independent validator)', async () => {
    const document = await (await server.get('/openapi.json')).json()
    const result = await new Validator().validate(document as Parameters<Validator["validate"]>[0])
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect((document as { openapi: string }).openapi).toBe('3.1.0')
  })

  test('lists exactly the three operations under /v1, with the bearer scheme', async () => {
    const document = (await (await server.get('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>
      components: { securitySchemes: Record<string, { type: string; scheme: string }> }
      security: unknown
    }
    expect(Object.keys(document.paths).sort()).toEqual(['/v1/exports/tickets.csv', '/v1/queues', '/v1/tickets'])
    for (const operations of Object.values(document.paths)) expect(Object.keys(operations)).toEqual(['get'])
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(document.security).toEqual([{ bearerAuth: [] }])
  })

  test('every parameter the server accepts is documented, and nothing else', async () => {
    const document = (await (await server.get('/openapi.json')).json()) as Record<string, any>
    const names = (path: string) =>
      ((document.paths[path].get.parameters ?? []) as { $ref: string }[]).map((p) => document.components.parameters[p.$ref.split('/').pop()!].name).sort()
    expect(names('/v1/tickets')).toEqual([...TICKET_PARAMETERS.page].sort())
    expect(names('/v1/exports/tickets.csv')).toEqual([...TICKET_PARAMETERS.export].sort())
    expect(names('/v1/queues')).toEqual([])
    const params = document.components.parameters
    for (const repeatable of ['queueId', 'locationId', 'status']) expect(params[repeatable]).toMatchObject({ style: 'form', explode: true, schema: { type: 'array' } })
    expect(params.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: 100 })
    expect(params.from.required).toBe(true)
    // Every documented parameter is accepted by the server (a 200, not a 400).
    const changesToken = (await server.get('/v1/tickets?from=2026-03-01&to=2026-03-05&limit=1', token)).headers.get('x-changes-token')!
    server.clock.advance(60_000)
    const all = `from=2026-03-01&to=2026-03-05&queueId=q_pay&locationId=loc_a&status=COMPLETED&changedAfter=${encodeURIComponent(changesToken)}`
    expect((await server.get(`/v1/tickets?${all}&limit=5`, token)).status).toBe(200)
    server.clock.advance(60_000)
    expect((await server.get(`/v1/exports/tickets.csv?${all}`, token)).status).toBe(200)
    server.clock.advance(60_000)
  })

  test('every error status of each operation is documented with its body and headers', async () => {
    const document = (await (await server.get('/openapi.json')).json()) as Record<string, any>
    for (const path of Object.keys(document.paths)) {
      expect(Object.keys(document.paths[path].get.responses).sort()).toEqual(['200', '400', '401', '402', '429', '500', '503'])
    }
    const headers = Object.keys(document.components.responses.TooManyRequests.headers)
    expect(headers).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy']))
    expect(Object.keys(document.paths['/v1/exports/tickets.csv'].get.responses['200'].headers)).toEqual(expect.arrayContaining(['Content-Disposition', 'X-Service-Demo', 'X-Changes-Token']))
    expect(Object.keys(document.paths['/v1/tickets'].get.responses['200'].headers)).toEqual(expect.arrayContaining(['X-Changes-Token']))
    expect(document.components.headers['X-Changes-Token'].schema).toEqual({ type: 'string' })
  })

  test('real responses match the documented schemas', async () => {
    server.clock.advance(60_000)
    expect(Value.Check(QueuesResponseSchema, await (await server.get('/v1/queues', token)).json())).toBe(true)
    expect(Value.Check(TicketPageSchema, await (await server.get('/v1/tickets?from=2026-03-01&to=2026-03-05&limit=2', token)).json())).toBe(true)
    expect(Value.Check(ErrorSchema, await (await server.get('/v1/tickets?from=x&to=2026-03-05', token)).json())).toBe(true)
    expect(Value.Check(ErrorSchema, await (await server.get('/v1/queues')).json())).toBe(true)
    for (let i = 0; i < 2; i++) await (await server.get('/v1/queues', token)).arrayBuffer()
    expect(Value.Check(RateLimitedSchema, await (await server.get('/v1/queues', token)).json())).toBe(true)
    await (await server.get('/v1/queues', demoToken)).arrayBuffer()
    expect(Value.Check(DemoQuotaSchema, await (await server.get('/v1/queues', demoToken)).json())).toBe(true)
  })
})

describe('CORS (decisions.md §12)', () => {
  const ORIGIN = 'https://dashboard.example'
  const operations = ['/v1/queues', '/v1/tickets?from=2026-03-01&to=2026-03-05', '/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-05']

  for (const path of operations) {
    test(`preflight and a cross-origin GET of ${path.split('?')[0]}`, async () => {
      server.clock.advance(60_000)
      const preflight = await fetch(server.base + path, {
        method: 'OPTIONS',
        headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' },
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
      expect(preflight.headers.get('access-control-allow-methods')).toBe('GET')
      expect(preflight.headers.get('access-control-allow-headers')!.toLowerCase()).toContain('authorization')

      const response = await fetch(server.base + path, { headers: { Origin: ORIGIN, Authorization: `Bearer ${token}` } })
      expect(response.status).toBe(200)
      expect(response.headers.get('access-control-allow-origin')).toBe('*')
      const exposed = response.headers.get('access-control-expose-headers')!.split(/,\s*/)
      expect(exposed).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Content-Disposition', 'X-Service-Demo', 'X-Changes-Token']))
      if (path !== '/v1/queues') expect(response.headers.get('x-changes-token')).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
      await response.arrayBuffer()
    })
  }

  test('errors carry CORS headers too, so a dashboard can read them', async () => {
    const response = await fetch(`${server.base}/v1/queues`, { headers: { Origin: ORIGIN } })
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
  })
})

describe('pages outside /v1', () => {
  test('/, /docs and their assets are served without a token, from this host only', async () => {
    for (const path of ['/', '/docs', '/assets/app.js', '/assets/app.css', '/assets/docs.js', '/assets/swagger-ui/swagger-ui-bundle.js', '/assets/swagger-ui/swagger-ui.css']) {
      const response = await server.get(path)
      expect(response.status).toBe(200)
      const text = await response.text()
      if (path === '/' || path === '/docs') {
        expect(response.headers.get('content-security-policy')).toContain("default-src 'self'")
        expect(text).not.toMatch(/(src|href)="https?:\/\//)
      }
    }
  })
})
