import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { securitySuite } from '../support/security-suite.ts'

securitySuite('/v1/queues')

describe('GET /v1/queues', () => {
  let server: TestServer
  let token: string

  beforeAll(async () => {
    server = await startServer()
    token = server.seeded().token
  })
  afterAll(() => server.close())

  test('every location with its queues, ordered by name then id, UTF-8 intact', async () => {
    const response = await server.get('/v1/queues', token)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toStartWith('application/json')
    const body = await response.json()
    expect(body).toEqual({
      locations: [
        {
          id: 'loc_a', name: 'Amsterdam Centraal', slug: 'amsterdam',
          queues: [
            { id: 'q_old', name: 'Archive desk', slug: 'archive', status: 'INACTIVE' },
            { id: 'q_id', name: 'ID & Passports', slug: 'id', status: 'ACTIVE' },
            { id: 'q_pay', name: 'Payments', slug: 'payments', status: 'ACTIVE' },
          ],
        },
        { id: 'loc_a2', name: 'Amsterdam Centraal', slug: 'amsterdam-2', queues: [{ id: 'q_a2', name: 'General', slug: 'general', status: 'ACTIVE' }] },
        { id: 'loc_b', name: 'Zürich Hauptbahnhof', slug: 'zurich-hb', queues: [{ id: 'q_zh', name: 'Schalter 1 — Ämter', slug: 'schalter-1', status: 'ACTIVE' }] },
        { id: 'loc_empty', name: 'Ålesund (no queues yet)', slug: 'alesund', queues: [] },
      ],
    })
  })

  test('the returned ids work as filters on /v1/tickets', async () => {
    const { locations } = (await (await server.get('/v1/queues', token)).json()) as { locations: { id: string; queues: { id: string }[] }[] }
    const zurich = locations.find((l) => l.id === 'loc_b')!
    const byQueue = await server.get(`/v1/tickets?from=2026-03-01&to=2026-03-05&queueId=${zurich.queues[0]!.id}`, token)
    const byLocation = await server.get(`/v1/tickets?from=2026-03-01&to=2026-03-05&locationId=${zurich.id}`, token)
    const queueIds = ((await byQueue.json()) as { items: { id: string }[] }).items.map((t) => t.id)
    const locationIds = ((await byLocation.json()) as { items: { id: string }[] }).items.map((t) => t.id)
    expect(queueIds).toEqual(['t-004', 't-005', 't-006'])
    expect(locationIds).toEqual(queueIds)
  })

  test('an organisation with no locations gets an empty list', async () => {
    const empty = server.organisation()
    const response = await server.get('/v1/queues', empty.token)
    expect(await response.json()).toEqual({ locations: [] })
  })
})
