import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { startServer, type TestServer } from '../support/harness.ts'
import { CANARY } from '../support/fixtures.ts'
import { connect } from 'node:net'
import { eventually } from '../support/raw-http.ts'
import { ERROR_STATUS } from '../../src/contract/vocabulary.ts'
import { hashToken } from '../../src/auth/token.ts'

/**
 * Property-based fuzzing over real HTTP: at least 10,000 generated requests per run across the
 * three operations. Whatever the input, the answer is a documented status with the documented
 * body, never a 5xx, and never a personal value, token or hash.
 */

let server: TestServer
let token: string
let demoToken: string

beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 1_000_000, demoDailyQuota: 1_000_000 })
  token = server.seeded().token
  demoToken = server.seeded({ plan: 'demo' }).token
})
afterAll(() => server.close())

const OPERATIONS = ['/v1/queues', '/v1/tickets', '/v1/exports/tickets.csv']
const KNOWN_KEYS = ['from', 'to', 'queueId', 'locationId', 'status', 'cursor', 'limit']

/** Values a hostile or careless client sends. */
const hostileValue = fc.oneof(
  fc.constantFrom('2026-03-01', '2026-03-05T00:00:00Z', '2026-03-01T00:00:00%2B01:00', '2026-02-30', '2026-03-01T10:00:00', 'COMPLETED', 'WAITING', 'q_pay', 'loc_a', '500', '0', '-1'),
  fc.constantFrom('%zz', '%', '%f', '%ff%fe', '%c3%28', '%00', '%e2%82', '%ed%a0%80', '%F0%9F%98%80', '%2C%2C', '+', '%20'),
  fc.constantFrom('9'.repeat(400), '1e309', 'NaN', 'Infinity', '0x1F', '٣', '２０２６-03-01', 'null', 'undefined', '[]', '{}', '__proto__', 'constructor'),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent),
  fc.integer({ min: 1, max: 3000 }).map((n) => 'x'.repeat(n)),
)
const key = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...KNOWN_KEYS) }, fc.constantFrom('access_token', 'token', 'sort', 'offset', '__proto__', 'from[]', 'FROM', ''), fc.string({ maxLength: 10 }).map(encodeURIComponent))
const pair = fc.tuple(key, hostileValue).map(([k, v]) => `${k}=${v}`)
const query = fc.oneof(
  { weight: 8, arbitrary: fc.array(pair, { maxLength: 8 }).map((pairs) => pairs.join('&')) },
  { weight: 1, arbitrary: fc.integer({ min: 500, max: 1500 }).map((n) => Array.from({ length: n }, (_, i) => `queueId=q${i}`).join('&')) },
  { weight: 1, arbitrary: fc.constantFrom('&&&', '=', '==', '?', '&=&', 'from=2026-03-01&to=2026-03-02&from', '%', 'a=%') },
)
const path = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...OPERATIONS) },
  { weight: 2, arbitrary: fc.constantFrom('/v1/tickets/', '/V1/TICKETS', '/v1//tickets', '/v1/tickets.csv', '/v1/%71ueues', '/v1/exports/tickets%2Ecsv', '/v2/tickets', '/..%2F..%2Fetc/passwd', '/v1/queues/../tickets', '/healthz', '/readyz', '/', '/docs', '/openapi.json') },
  { weight: 1, arbitrary: fc.webPath() },
)
const authorization = fc.oneof(
  { weight: 6, arbitrary: fc.constant(`Bearer TOKEN`) },
  { weight: 1, arbitrary: fc.constant(`Bearer DEMO`) },
  fc.constantFrom('', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer svc_', 'bearer  TOKEN  ', 'Token TOKEN', `Bearer ${'svc_'.padEnd(5000, 'A')}`),
  fc.string({ maxLength: 60 }).map((s) => `Bearer ${s.replace(/[\r\n\0]/g, '')}`),
)
const method = fc.oneof({ weight: 12, arbitrary: fc.constant('GET') }, fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE'))
const extraHeaders = fc.record({
  'X-Request-Id': fc.oneof(fc.constant('fuzz-1'), fc.string({ maxLength: 100 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''))),
  'Accept-Encoding': fc.constantFrom('gzip', 'identity', 'gzip;q=0', '*', 'br, gzip', 'x'),
})

const documentedStatuses = new Set([200, 204, 400, 401, 402, 404, 405, 429, 431, 503])
const secrets = () => [token, demoToken, hashToken(token), hashToken(demoToken), ...Object.values(CANARY).map(String), server.dataDir]

async function check(m: string, p: string, q: string, auth: string, headers: Record<string, string>) {
  const url = `${server.base}${p}${q ? `?${q}` : ''}`
  const finalAuth = auth.replace('TOKEN', token).replace('DEMO', demoToken)
  const response = await fetch(url, { method: m, headers: { ...headers, ...(finalAuth ? { Authorization: finalAuth } : {}) } })
  // Bun sends no body for HEAD and TRACE answers (status and headers are still checked).
  const bodiless = m === 'HEAD' || m === 'TRACE'
  const body = bodiless ? '' : await response.text()
  const status = response.status
  if (!documentedStatuses.has(status)) throw new Error(`undocumented status ${status} for ${m} ${url.slice(0, 200)}: ${body.slice(0, 200)}`)
  // A request line and headers over 16 KiB together are 431, with the JSON body (docs/api.md#limits-of-http-input).
  const headBytes = url.length + finalAuth.length + Object.values(headers).join('').length
  if (status === 431 && headBytes < 15_000) throw new Error(`431 for a ${headBytes}-byte request head`)
  for (const secret of secrets()) if (body.includes(secret)) throw new Error(`a secret leaked in ${m} ${url.slice(0, 200)}`)
  if (status >= 400 && !bodiless) {
    const parsed = JSON.parse(body) as Record<string, unknown>
    expect(ERROR_STATUS[parsed.error as keyof typeof ERROR_STATUS]).toBe(status as never)
    expect(typeof parsed.message).toBe('string')
    expect(parsed.requestId).toBe(response.headers.get('x-request-id')!)
    expect(response.headers.get('content-type')).toBe('application/json')
  }
}

describe('fuzzing the three operations', () => {
  test('10,000 generated requests: documented statuses and bodies only, nothing leaked', async () => {
    let count = 0
    await fc.assert(
      fc.asyncProperty(method, path, query, authorization, extraHeaders, async (m, p, q, auth, headers) => {
        count++
        await check(m, p, q, auth, headers)
      }),
      { numRuns: 10_000, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
    )
    expect(count).toBeGreaterThanOrEqual(10_000)
  }, 240_000)

  test('malformed and oversized HTTP is answered with a clean 4xx, and the server keeps serving', async () => {
    const rawRequests = [
      `GET /v1/tickets?from=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: t\r\n\r\n`,
      `GET /v1/queues HTTP/1.1\r\nHost: t\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`,
      `GET /v1/queues HTTP/1.1\r\nHost: t\r\n${Array.from({ length: 300 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
      `GET /v1/queues HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer a\u0000b\r\n\r\n`,
      `GET /v1/queues HTTP/1.1\r\nHost: t\r\nBroken header line\r\n\r\n`,
      `G@T /v1/queues HTTP/1.1\r\nHost: t\r\n\r\n`,
      `BLAH\r\n\r\n`,
    ]
    const url = new URL(server.base)
    for (const request of rawRequests) {
      const socket = connect({ host: url.hostname, port: Number(url.port) })
      let answer = ''
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')))
      const closed = new Promise((resolve) => socket.on('close', resolve))
      socket.on('error', () => undefined)
      socket.write(Buffer.from(request, 'latin1'))
      await eventually(() => answer.includes('\r\n'), 5000, 'an answer')
      socket.destroy()
      await closed
      expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /)
    }
    expect((await server.get('/v1/queues', token)).status).toBe(200)
  })
})
