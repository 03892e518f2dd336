import { beforeAll, describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { openTenant, seededServer } from '../support/harness.ts'
import { writeLocationZones } from '../support/fixtures.ts'
import { QueuesResponseSchema } from '../../src/contract/schemas.ts'
import { migrate } from '../../src/db/migrator.ts'
import { TENANT_MIGRATIONS } from '../../src/tenant/migrations.ts'
import { securitySuite } from '../support/security-suite.ts'

securitySuite('/v1/queues')

describe('GET /v1/queues', () => {
  const seeded = seededServer()

  test('every location with its queues, ordered by name then id, UTF-8 intact', async () => {
    const response = await seeded.server.get('/v1/queues', seeded.token)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toStartWith('application/json')
    const body = await response.json()
    expect(body).toEqual({
      locations: [
        {
          id: 'loc_a', name: 'Amsterdam Centraal', slug: 'amsterdam', timeZone: null,
          queues: [
            { id: 'q_old', name: 'Archive desk', slug: 'archive', status: 'INACTIVE' },
            { id: 'q_id', name: 'ID & Passports', slug: 'id', status: 'ACTIVE' },
            { id: 'q_pay', name: 'Payments', slug: 'payments', status: 'ACTIVE' },
          ],
        },
        { id: 'loc_a2', name: 'Amsterdam Centraal', slug: 'amsterdam-2', timeZone: null, queues: [{ id: 'q_a2', name: 'General', slug: 'general', status: 'ACTIVE' }] },
        { id: 'loc_b', name: 'Zürich Hauptbahnhof', slug: 'zurich-hb', timeZone: null, queues: [{ id: 'q_zh', name: 'Schalter 1 — Ämter', slug: 'schalter-1', status: 'ACTIVE' }] },
        { id: 'loc_empty', name: 'Ålesund (no queues yet)', slug: 'alesund', timeZone: null, queues: [] },
      ],
    })
  })

  test('the returned ids work as filters on /v1/tickets', async () => {
    const { locations } = (await (await seeded.server.get('/v1/queues', seeded.token)).json()) as { locations: { id: string; queues: { id: string }[] }[] }
    const zurich = locations.find((l) => l.id === 'loc_b')!
    const byQueue = await seeded.server.get(`/v1/tickets?from=2026-03-01&to=2026-03-05&queueId=${zurich.queues[0]!.id}`, seeded.token)
    const byLocation = await seeded.server.get(`/v1/tickets?from=2026-03-01&to=2026-03-05&locationId=${zurich.id}`, seeded.token)
    const queueIds = ((await byQueue.json()) as { items: { id: string }[] }).items.map((t) => t.id)
    const locationIds = ((await byLocation.json()) as { items: { id: string }[] }).items.map((t) => t.id)
    expect(queueIds).toEqual(['t-004', 't-005', 't-006'])
    expect(locationIds).toEqual(queueIds)
  })

  test('an organisation with no locations gets an empty list', async () => {
    const empty = seeded.server.organisation()
    const response = await seeded.server.get('/v1/queues', empty.token)
    expect(await response.json()).toEqual({ locations: [] })
  })
})

describe("a location's time zone (tenant schema version 5)", () => {
  const seeded = seededServer()

  beforeAll(() => {
    const db = openTenant(seeded.server.dataDir, seeded.org.id)
    writeLocationZones(db)
    db.close()
  })

  const zones = async () => {
    const response = await seeded.server.get('/v1/queues', seeded.token)
    return { status: response.status, body: (await response.json()) as { locations?: { id: string; timeZone: string | null }[]; error?: string } }
  }

  test('served as timeZone on each location: IANA current name (Asia/Calcutta as Asia/Kolkata), null where none', async () => {
    const { status, body } = await zones()
    expect(status).toBe(200)
    expect(Object.fromEntries(body.locations!.map((l) => [l.id, l.timeZone]))).toEqual({ loc_a: 'Europe/Amsterdam', loc_a2: 'Asia/Kolkata', loc_b: 'Europe/Zurich', loc_empty: null })
    expect(Value.Check(QueuesResponseSchema, body)).toBe(true)
  })

  test("the file's triggers refuse an abbreviation, an offset, a name that is not one; the row keeps its zone", () => {
    const db = openTenant(seeded.server.dataDir, seeded.org.id)
    try {
      for (const bad of ['IST', 'ist', '+05:30', 'UTC+1', 'Europe/ Zurich', '', 'Europe/Zurich\0']) {
        expect(() => db.query("UPDATE locations SET time_zone = ? WHERE id = 'loc_b'").run(bad)).toThrow('tenant contract: locations.time_zone must be an IANA time zone name')
      }
      expect(() => db.query("INSERT INTO locations (id, name, slug, time_zone) VALUES ('loc_x', 'X', 'x', 'CST')").run()).toThrow('tenant contract: locations.time_zone')
      expect(db.query("SELECT time_zone FROM locations WHERE id = 'loc_b'").get()).toEqual({ time_zone: 'Europe/Zurich' })
    } finally {
      db.close()
    }
  })

  test('a zone no one knows (the triggers check the form only) is a row that breaks the contract: 503, logged, served again once corrected', async () => {
    const set = (zone: string) => {
      const db = openTenant(seeded.server.dataDir, seeded.org.id)
      db.query("UPDATE locations SET time_zone = ? WHERE id = 'loc_b'").run(zone)
      db.close()
    }
    set('Europe/Atlantis')
    const refused = await zones()
    expect(refused).toMatchObject({ status: 503, body: { error: 'data_unavailable' } })
    const logged = seeded.server.logger.lines.map((line) => JSON.parse(line)).filter((line) => line.event === 'tenant_unavailable' && line.table === 'locations')
    expect(logged).toHaveLength(1)
    expect(logged[0]).toMatchObject({ rowId: 'loc_b', columns: ['time_zone'] })
    expect((await seeded.server.get('/v1/tickets?from=2026-03-01&to=2026-03-05', seeded.token)).status).toBe(200)
    set('Europe/Zurich')
    expect((await zones()).status).toBe(200)
  })

  test('a file taken back to version 4 has no zones: every timeZone is null; brought up again, none is known yet', async () => {
    const db = openTenant(seeded.server.dataDir, seeded.org.id)
    try {
      migrate(db, TENANT_MIGRATIONS, 4)
      const { status, body } = await zones()
      expect(status).toBe(200)
      expect(body.locations!.map((l) => l.timeZone)).toEqual([null, null, null, null])
      migrate(db, TENANT_MIGRATIONS)
      expect((await zones()).body.locations!.map((l) => l.timeZone)).toEqual([null, null, null, null])
      writeLocationZones(db)
    } finally {
      db.close()
    }
  })
})
