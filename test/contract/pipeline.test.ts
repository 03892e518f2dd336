import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startServer, type TestServer } from '../support/harness.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import type { AnsweredRequest } from '../../src/http/pipeline.ts'

/**
 * The one place where a request is answered (src/http/pipeline.ts): every request, however it
 * ends, reaches the observers once, after the access log, with its final response.
 */
describe('the request pipeline: observers of answered requests', () => {
  let server: TestServer
  let token: string
  const seen: AnsweredRequest[] = []
  const afterFailing: string[] = []

  beforeAll(async () => {
    server = await startServer({}, {
      observers: [
        (answered) => seen.push(answered),
        ({ context }) => {
          if (context.path === '/healthz') throw new Error('observer broke')
        },
        ({ context }) => afterFailing.push(context.id),
      ],
    })
    token = server.seeded().token
  })
  afterAll(() => server.close())

  async function answered(path: string, init: RequestInit & { id: string }) {
    const response = await fetch(server.base + path, { ...init, headers: { ...(init.headers as Record<string, string>), 'X-Request-Id': init.id } })
    await response.arrayBuffer()
    const matching = seen.filter((entry) => entry.context.id === init.id)
    expect(matching).toHaveLength(1)
    const entry = matching[0]!
    expect(entry.response.status).toBe(response.status)
    expect(entry.response.headers.get('x-request-id')).toBe(init.id)
    expect(entry.durationMs).toBeGreaterThanOrEqual(0)
    return { response, entry }
  }

  test('each way a request can end is observed once, with its status, route and caller', async () => {
    const bearer = { Authorization: `Bearer ${token}` }
    const cases: [string, RequestInit & { id: string }, number, string | null][] = [
      ['/v1/queues', { id: 'ok-1', headers: bearer }, 200, '/v1/queues'],
      ['/v1/tickets?from=2026-03-01&to=2026-03-02&nope=1', { id: 'bad-query-1', headers: bearer }, 400, '/v1/tickets'],
      ['/v1/queues', { id: 'no-token-1' }, 401, '/v1/queues'],
      ['/v1/nowhere', { id: 'unknown-1', headers: bearer }, 404, null],
      ['/v1/queues', { id: 'post-1', method: 'POST', headers: bearer }, 405, null],
      ['/v1/queues', { id: 'preflight-1', method: 'OPTIONS' }, 204, null],
      ['/', { id: 'page-1' }, 200, '/'],
      ['/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-10', { id: 'export-1', headers: bearer }, 200, '/v1/exports/tickets.csv'],
    ]
    for (const [path, init, status, route] of cases) {
      const { response, entry } = await answered(path, init)
      expect({ id: init.id, status: response.status, route: entry.route }).toEqual({ id: init.id, status, route })
    }
    const byId = (id: string) => seen.find((entry) => entry.context.id === id)!
    // The caller is on the context from the token on, and the limits' headers on every answer after the gate.
    expect(byId('ok-1').context.caller?.organisationId).toBeString()
    expect(byId('bad-query-1').context.caller?.organisationId).toBe(byId('ok-1').context.caller!.organisationId)
    expect(byId('bad-query-1').response.headers.get('x-ratelimit-remaining')).not.toBeNull()
    expect(byId('no-token-1').context.caller).toBeUndefined()
    expect(byId('unknown-1').context.caller).toBeUndefined()
    // Observers come after the access log line of the same request.
    const accessLine = server.logger.lines.map((line) => JSON.parse(line)).find((line) => line.event === 'request' && line.requestId === 'ok-1')
    expect(accessLine).toMatchObject({ status: 200, path: '/v1/queues' })
    expect(server.app.inFlight()).toBe(0)
    // Each request's context is made once by the pipeline, never looked up afterwards.
    expect(server.logger.lines.filter((line) => line.includes('pipeline_untracked_request'))).toEqual([])
  })

  test('an export refused before its first byte leaves nothing in flight', async () => {
    const { org, token: brokenToken } = server.organisation()
    rmSync(tenantFilePath(server.dataDir, org.id))
    const { response } = await answered('/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-10', { id: 'export-503', headers: { Authorization: `Bearer ${brokenToken}` } })
    expect(response.status).toBe(503)
    expect(seen.find((entry) => entry.context.id === 'export-503')!.context.bodyEnded).toBeUndefined()
    expect(server.app.inFlight()).toBe(0)
  })

  test('an observer that throws changes nothing for the client and the observers after it still run', async () => {
    const { response } = await answered('/healthz', { id: 'observer-broke-1' })
    expect(response.status).toBe(200)
    expect(afterFailing).toContain('observer-broke-1')
    const failed = server.logger.lines.map((line) => JSON.parse(line)).filter((line) => line.event === 'observer_failed')
    expect(failed).toEqual([expect.objectContaining({ requestId: 'observer-broke-1', error: 'Error: observer broke' })])
  })
})
