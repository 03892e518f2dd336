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
  server = await startServerProcess({ DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '1000', SHUTDOWN_DRAIN_MS: '3600000' })
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
