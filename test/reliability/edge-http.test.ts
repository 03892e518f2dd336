import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { tempDataDir, openTenant } from '../support/harness.ts'
import { writeStructure } from '../support/fixtures.ts'
import { startServerProcess, type ServerProcess } from '../support/server-process.ts'
import { eventually, rawExchange, type RawResponse } from '../support/raw-http.ts'

/**
 * Requests that a browser or a client library never sends, against a real server process over
 * raw sockets: the Host header missing or broken, an absolute-form target, a request head too
 * large, tokens where a log could pick them up. Every one must get the JSON answer with its
 * request id and one access line, and leave nothing in flight.
 */

let dataDir: string
let cleanup: () => void
let token: string
let server: ServerProcess

beforeAll(async () => {
  ;({ dir: dataDir, cleanup } = tempDataDir())
  const store = new ControlStore(dataDir)
  const org = createOrganisationWithTenant(store, { name: 'Edge', plan: 'paid', apiEnabled: true, now: Date.now() })
  const db = openTenant(dataDir, org.id)
  writeStructure(db)
  db.close()
  token = store.createToken({ organisationId: org.id, name: 'edge', createdAt: new Date().toISOString() }).token
  store.close()
  // A drain longer than any test: a request left counted in flight would hang SIGTERM past the test's timeout.
  // At debug: a health check's access line is written at debug (docs/operations.md#access-log), and these tests read it.
  server = await startServerProcess({ DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '1000', SHUTDOWN_DRAIN_MS: '3600000', LOG_LEVEL: 'debug' })
})
afterAll(() => {
  if (server.process.exitCode === null) server.process.kill('SIGKILL')
  cleanup()
})

/** The JSON log lines the server wrote so far. */
const logLines = () =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)

/** The response is JSON with the request id of its header, and the server logged one access line for it. */
async function expectAnsweredAndLogged(response: RawResponse, status: number) {
  expect({ status: response.status, type: response.headers['content-type'] }).toEqual({ status, type: 'application/json' })
  const id = response.headers['x-request-id']!
  expect(id).toBeString()
  const body = JSON.parse(response.body) as Record<string, unknown>
  if (status >= 400) expect(body.requestId).toBe(id)
  // The log is written in batches, at the end of the server's turn of the event loop.
  await eventually(() => logLines().some((line) => line.event === 'request' && line.requestId === id), 5000, `the access line of ${id}`)
  expect(logLines().filter((line) => line.event === 'request' && line.requestId === id)).toHaveLength(1)
  return body
}

describe('whatever the Host header', () => {
  const cases: [string, string, number][] = [
    ['HTTP/1.0 without Host (a load balancer health check)', 'GET /healthz HTTP/1.0\r\n\r\n', 200],
    ['HTTP/1.0 without Host, on an operation with two slashes after the first', 'GET /v1/exports/tickets.csv HTTP/1.0\r\n\r\n', 401],
    ['HTTP/1.0 absolute-form target without Host', 'GET http://elsewhere.example/v1/queues HTTP/1.0\r\n\r\n', 401],
    ['an empty Host', 'GET /v1/queues HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n', 401],
    ['a Host with a space', 'GET /v1/queues HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n', 401],
    ['a Host with an unclosed IPv6 bracket', 'GET /v1/queues HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n', 401],
    ['a Host with a port out of range', 'GET /v1/queues HTTP/1.1\r\nHost: api:99999\r\nConnection: close\r\n\r\n', 401],
    ['a Host with a bad percent-escape', 'GET /v1/queues HTTP/1.1\r\nHost: a%zz\r\nConnection: close\r\n\r\n', 401],
    ['a HEAD without Host', 'HEAD /v1/queues HTTP/1.0\r\n\r\n', 401],
    ['a POST without Host', 'POST /v1/queues HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}', 405],
    ['an unknown path without Host', 'GET /v1/queues/ HTTP/1.0\r\n\r\n', 404],
  ]
  for (const [name, request, status] of cases) {
    test(`${name}: ${status}, JSON, an access line`, async () => {
      const response = await rawExchange(server.base, request)
      if (request.startsWith('HEAD')) {
        expect(response.body).toBe('')
        expect(response.status).toBe(status)
        return
      }
      await expectAnsweredAndLogged(response, status)
    })
  }

  test('with a token and a broken Host, the operation answers its data', async () => {
    const response = await rawExchange(server.base, `GET /v1/queues HTTP/1.1\r\nHost: [::1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`)
    const body = await expectAnsweredAndLogged(response, 200)
    expect(body.locations).toBeArray()
  })

  test('HTTP/1.1 without any Host is refused 400 by Bun itself, before the service (the one exception), and the server goes on', async () => {
    const response = await rawExchange(server.base, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n')
    expect(response.status).toBe(400)
    const after = await rawExchange(server.base, 'GET /healthz HTTP/1.0\r\n\r\n')
    await expectAnsweredAndLogged(after, 200)
  })
})

describe('request heads too large', () => {
  test('over 16 KiB: 431 with the JSON body, its request id and an access line; nothing counted', async () => {
    const big = 'x'.repeat(20_000)
    const response = await rawExchange(server.base, `GET /v1/queues HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${token}\r\nX-Big: ${big}\r\nConnection: close\r\n\r\n`)
    const body = await expectAnsweredAndLogged(response, 431)
    expect(body.error).toBe('headers_too_large')
    // Refused before any route: the token's window was not looked at.
    expect(response.headers['x-ratelimit-remaining']).toBeUndefined()
    const query = await rawExchange(server.base, `GET /v1/tickets?from=${big} HTTP/1.0\r\n\r\n`)
    expect((await expectAnsweredAndLogged(query, 431)).error).toBe('headers_too_large')
  })

  test('over 64 KiB: Bun closes the connection after a bare 431, and the server goes on', async () => {
    const response = await rawExchange(server.base, `GET /v1/queues HTTP/1.1\r\nHost: t\r\nX-Big: ${'x'.repeat(70_000)}\r\nConnection: close\r\n\r\n`)
    expect(response.status).toBe(431)
    await expectAnsweredAndLogged(await rawExchange(server.base, 'GET /healthz HTTP/1.0\r\n\r\n'), 200)
  })
})

describe('the request target is matched as sent', () => {
  // Each resolves to an operation or a page if dot segments, backslashes or encoded slashes are
  // read as a URL parser reads them; as sent, none is a path the service serves.
  const targets = [
    '/v1/x/%2E%2E/queues',
    '/v1/x/%2e%2e/queues',
    '/x/../v1/queues',
    '/v1/./queues',
    '/v1/%2E/queues',
    '/v1\\exports\\tickets.csv?from=2026-03-01&to=2026-03-02',
    '/v1%2Fqueues',
    '/v1%2fqueues',
    '/v1/exports%2Ftickets.csv',
    '/v1%5Cqueues',
    '/v1/queues/.',
    '/./healthz',
    '/docs/../openapi.json',
  ]
  for (const target of targets) {
    test(`${target}: 404 not_found, JSON, an access line with the error code; nothing counted`, async () => {
      for (const method of ['GET', 'HEAD', 'OPTIONS']) {
        const response = await rawExchange(server.base, `${method} ${target} HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`)
        expect({ method, status: response.status }).toEqual({ method, status: 404 })
        expect(response.headers['x-ratelimit-remaining']).toBeUndefined()
        if (method !== 'GET') continue
        const body = await expectAnsweredAndLogged(response, 404)
        expect(body.error).toBe('not_found')
        const line = logLines().find((entry) => entry.event === 'request' && entry.requestId === body.requestId)!
        expect(line).toMatchObject({ status: 404, error: 'not_found', method: 'GET' })
      }
    })
  }

  test('the access line shows the target as sent where Bun passes it on, and marks a known path that Bun resolved', async () => {
    const logged = async (target: string, host = '') => {
      const body = await expectAnsweredAndLogged(await rawExchange(server.base, `GET ${target} HTTP/1.0\r\n${host}\r\n`), 404)
      return logLines().find((entry) => entry.event === 'request' && entry.requestId === body.requestId)!
    }
    // Encoded slashes are never decoded; without a Host, Bun passes on the target untouched.
    expect(await logged('/v1%2Fqueues', 'Host: api\r\n')).toMatchObject({ path: '/v1%2Fqueues', error: 'not_found' })
    expect(await logged('/v1/exports%5Ctickets.csv', 'Host: api\r\n')).toMatchObject({ path: '/v1/exports%5Ctickets.csv' })
    expect(await logged('/x/../v1/queues')).toMatchObject({ path: '/x/../v1/queues', status: 404 })
    expect(await logged('/v1\\exports\\tickets.csv')).toMatchObject({ path: '/v1\\exports\\tickets.csv' })
    // With a Host, Bun hands the application the resolved form only; the line says it was not sent so.
    expect(await logged('/x/../v1/queues', 'Host: api\r\n')).toMatchObject({ path: '/v1/queues', status: 404, pathResolved: true })
    expect(await logged('/v1\\exports\\tickets.csv', 'Host: api\r\n')).toMatchObject({ path: '/v1/exports/tickets.csv', pathResolved: true })
    expect((await logged('/v1/nowhere', 'Host: api\r\n')).pathResolved).toBeUndefined()
  })

  test('the same paths spelled plainly are served', async () => {
    const queues = await rawExchange(server.base, `GET /v1/queues HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    expect((await expectAnsweredAndLogged(queues, 200)).locations).toBeArray()
    await expectAnsweredAndLogged(await rawExchange(server.base, 'GET /healthz HTTP/1.0\r\n\r\n'), 200)
  })
})

describe('error lines name their error', () => {
  test('401, 400 and 405: each access line carries the error code; a 200 none', async () => {
    const cases: [string, number, string | undefined][] = [
      ['GET /v1/queues HTTP/1.0\r\n\r\n', 401, 'unauthorized'],
      [`GET /v1/tickets?from=x&to=y HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`, 400, 'invalid_request'],
      ['DELETE /v1/queues HTTP/1.0\r\n\r\n', 405, 'method_not_allowed'],
      ['GET /healthz HTTP/1.0\r\n\r\n', 200, undefined],
    ]
    for (const [request, status, code] of cases) {
      const response = await rawExchange(server.base, request)
      await expectAnsweredAndLogged(response, status)
      const id = response.headers['x-request-id']
      const line = logLines().find((entry) => entry.event === 'request' && entry.requestId === id)!
      expect({ status: line.status, error: line.error }).toEqual({ status, error: code })
    }
  })
})

describe('tokens never reach the log', () => {
  test('in the path, in a percent-encoded query value, in X-Request-Id: redacted in the log, the id replaced and not echoed', async () => {
    const secret = token.slice('svc_'.length)
    const encoded = [...token].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')
    const requests = [
      `GET /v1/${token} HTTP/1.0\r\n\r\n`,
      `GET /v1/queues/${token.replace('_', '%5F')} HTTP/1.0\r\n\r\n`,
      `GET /v1/tickets?from=2026-03-01&to=2026-03-02&note=${encoded} HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      `GET /v1/tickets?from=2026-03-01&to=2026-03-02&note=svc%255F${secret} HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      `GET /v1/queues HTTP/1.0\r\nX-Request-Id: ${token}\r\n\r\n`,
      `GET /v1/queues HTTP/1.0\r\nX-Request-Id: SVC_${secret.slice(0, 10)}\r\n\r\n`,
    ]
    for (const request of requests) {
      const response = await rawExchange(server.base, request)
      const id = response.headers['x-request-id']!
      expect(id).not.toMatch(/svc_/i)
      expect(response.raw).not.toContain(secret.slice(0, 10))
      await expectAnsweredAndLogged(response, response.status)
    }
    const log = server.output()
    expect(log).not.toContain(secret.slice(0, 10))
    expect(log).not.toContain(secret.slice(-10))
    const redacted = logLines().filter((line) => line.event === 'request' && JSON.stringify(line).includes('svc_[redacted]'))
    // Both paths, both queries; a replaced request id is a fresh UUID.
    expect(redacted.map((line) => line.path ?? line.query).length).toBeGreaterThanOrEqual(4)
  })
})

describe('shutdown after all of the above', () => {
  test('SIGTERM finds nothing in flight and exits 0 at once', async () => {
    const status = await server.stop('SIGTERM')
    expect(status).toBe(0)
    const started = logLines().find((line) => line.event === 'shutdown_started' && line.worker === 0) // the worker's, not its supervisor's
    expect(started).toMatchObject({ inFlight: 0 })
  })
})
