import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ERROR_CODES, ERROR_STATUS } from '../../src/contract/vocabulary.ts'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Value } from '@sinclair/typebox/value'
import { startServer, type TestServer } from '../support/harness.ts'
// Registers the 'date-time' format the schemas name (the canonical instant), which Value.Check needs.
import '../conformance/assertions.ts'
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

  test('lists exactly the three operations under /v1 (each with its preflight), with the bearer scheme', async () => {
    const document = (await (await server.get('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>
      components: { securitySchemes: Record<string, { type: string; scheme: string }> }
      security: unknown
    }
    expect(Object.keys(document.paths).sort()).toEqual(['/v1/exports/tickets.csv', '/v1/queues', '/v1/tickets'])
    for (const operations of Object.values(document.paths)) {
      expect(Object.keys(operations)).toEqual(['get', 'options'])
      expect(operations.options).toMatchObject({ security: [], responses: { '204': expect.any(Object) } })
    }
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
      expect(Object.keys(document.paths[path].get.responses).sort()).toEqual(['200', '400', '401', '402', '404', '405', '429', '431', '500', '503'])
    }
    expect(Object.keys(document.components.responses.MethodNotAllowed.headers)).toEqual(['X-Request-Id', 'Allow'])
    const headers = Object.keys(document.components.responses.TooManyRequests.headers)
    expect(headers).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy']))
    expect(Object.keys(document.paths['/v1/exports/tickets.csv'].get.responses['200'].headers)).toEqual(expect.arrayContaining(['Content-Disposition', 'X-Service-Demo', 'X-Changes-Token']))
    expect(Object.keys(document.paths['/v1/tickets'].get.responses['200'].headers)).toEqual(expect.arrayContaining(['X-Changes-Token']))
    expect(document.components.headers['X-Changes-Token'].schema).toEqual({ type: 'string' })
    // Every 429 the server can answer has its body among the documented ones.
    const bodies = document.components.responses.TooManyRequests.content['application/json'].schema.oneOf.map((schema: { $ref: string }) => document.components.schemas[schema.$ref.split('/').pop()!])
    const codes = bodies.flatMap((body: any) => body.properties.error.enum ?? [body.properties.error.const])
    expect(codes.sort()).toEqual(ERROR_CODES.filter((code) => ERROR_STATUS[code] === 429).sort())
  })

  test('marks required exactly the response headers that are always sent where they are listed', async () => {
    const document = (await (await server.get('/openapi.json')).json()) as Record<string, any>
    const components = document.components.headers as Record<string, { required?: boolean }>
    const required = Object.keys(components).filter((name) => components[name]!.required === true).sort()
    expect(Object.keys(components).filter((name) => !required.includes(name)).sort()).toEqual(['X-Changes-Token', 'X-Service-Demo'])
    // A 503 may come before the limits could be read: there its rate-limit headers are listed unmarked.
    const unavailable = document.components.responses.DataUnavailable.headers as Record<string, { required?: boolean; $ref?: string }>
    expect(unavailable['X-Request-Id']!.$ref).toBe('#/components/headers/X-Request-Id')
    for (const name of ['X-RateLimit-Limit', 'Retry-After']) expect(unavailable[name]!.required).toBeUndefined()
    // What the document marks required is there on real answers of each kind.
    server.clock.advance(60_000)
    const requiredOn = (response: Response, names: string[]) => {
      for (const name of names) expect({ name, value: response.headers.get(name) }).toEqual({ name, value: expect.any(String) })
    }
    const rateLimit = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit', 'X-Request-Id']
    requiredOn(await server.get('/v1/queues', token), rateLimit)
    requiredOn(await server.get('/v1/tickets?from=x&to=2026-03-05', token), rateLimit)
    requiredOn(await server.get('/v1/queues'), ['WWW-Authenticate', 'X-Request-Id'])
    requiredOn(await server.get('/v1/queues/'), ['X-Request-Id'])
    requiredOn(await fetch(`${server.base}/v1/queues`, { method: 'DELETE' }), ['Allow', 'X-Request-Id'])
    requiredOn(await fetch(`${server.base}/v1/queues`, { method: 'OPTIONS' }), ['Access-Control-Allow-Origin', 'Access-Control-Allow-Methods', 'Access-Control-Allow-Headers', 'X-Request-Id'])
    server.clock.advance(60_000)
  })

  test('states the limits this server was started with, not the defaults', async () => {
    const document = (await (await server.get('/openapi.json')).json()) as Record<string, any>
    expect(document.info.description).toContain('5 requests per token in any 60-second window')
    expect(document.info.description).toContain('also 1 requests per UTC day')
    expect(document.info.description).not.toMatch(/\b60 requests|\b50 requests/)
    expect(document.components.headers['X-RateLimit-Limit'].schema.examples).toEqual([5])
    expect(document.components.headers['RateLimit-Policy'].description).toContain('"minute";q=5;w=60')
    expect(document.components.headers['RateLimit-Policy'].description).toContain('"day";q=1;w=86400')
  })

  test('reads well in /docs: named tags, visible bounds, one string type for from/to, a license, a link to the export page', async () => {
    const document = (await (await server.get('/openapi.json')).json()) as Record<string, any>
    const tagNames = document.tags.map((tag: { name: string }) => tag.name)
    for (const path of Object.keys(document.paths)) {
      const tags = document.paths[path].get.tags as string[]
      expect(tags.length).toBeGreaterThan(0)
      for (const tag of tags) expect(tagNames).toContain(tag)
    }
    const params = document.components.parameters
    expect(params.limit.description).toContain('1 to 500')
    for (const bound of ['from', 'to']) {
      expect(params[bound].schema).toEqual({ type: 'string', examples: expect.any(Array) })
      expect(params[bound].description).toMatch(/2026-03-\d\dT00:00:00Z/)
    }
    expect(document.info.license.name).toBeString()
    expect(document.info.description).toContain('](/)')
  })

  test('an independent linter (Redocly CLI, recommended rules) reports no error and no warning', async () => {
    const file = `${server.dataDir}/openapi.json`
    await Bun.write(file, await (await server.get('/openapi.json')).text())
    const cli = Bun.spawnSync(['node', require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--format=json', file], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    })
    const report = JSON.parse(cli.stdout.toString()) as { totals: { errors: number; warnings: number }; problems: { message: string }[] }
    expect(report.problems.map((problem) => problem.message)).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
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

describe('pages outside /v1', () => {
  test('scripts and stylesheets are gzipped for a client that accepts it, plain for one that does not: the same bytes, Vary: Accept-Encoding', async () => {
    const paths = ['/assets/app.js', '/assets/client.js', '/assets/charts-view.js', '/assets/charts-worker.js', '/assets/docs.js', '/assets/app.css',
      '/assets/docs.css', '/assets/swagger-ui/swagger-ui-bundle.js', '/assets/swagger-ui/swagger-ui.css']
    const sizes: Record<string, { plain: number; gzipped: number }> = {}
    for (const path of paths) {
      const plain = await fetch(server.base + path, { headers: { 'Accept-Encoding': 'identity' } })
      expect(plain.status).toBe(200)
      expect(plain.headers.get('content-encoding')).toBeNull()
      expect(plain.headers.get('vary')).toBe('Accept-Encoding')
      const plainBytes = await plain.bytes()
      // `decompress: false`: the bytes as they came over the wire.
      const gzipped = await fetch(server.base + path, { headers: { 'Accept-Encoding': 'gzip' }, decompress: false })
      expect(gzipped.headers.get('content-encoding')).toBe('gzip')
      expect(gzipped.headers.get('vary')).toBe('Accept-Encoding')
      expect(gzipped.headers.get('content-type')).toBe(plain.headers.get('content-type'))
      expect(gzipped.headers.get('content-security-policy')).toBe(plain.headers.get('content-security-policy'))
      const wire = await gzipped.bytes()
      expect(Buffer.from(Bun.gunzipSync(wire)).equals(Buffer.from(plainBytes))).toBe(true)
      sizes[path] = { plain: plainBytes.length, gzipped: wire.length }
    }
    // The page's own scripts are minified: the charting library's bundle, built as it was
    // before, was 489 KB plain.
    expect(sizes['/assets/charts-view.js']!.plain).toBeLessThan(350_000)
    expect(sizes['/assets/charts-view.js']!.gzipped).toBeLessThan(120_000)
    expect(sizes['/assets/swagger-ui/swagger-ui-bundle.js']!.gzipped * 3).toBeLessThan(sizes['/assets/swagger-ui/swagger-ui-bundle.js']!.plain)
    // q=0 refuses gzip.
    const refused = await fetch(server.base + '/assets/app.js', { headers: { 'Accept-Encoding': 'gzip;q=0' }, decompress: false })
    expect(refused.headers.get('content-encoding')).toBeNull()
  })

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
