import type { Database } from 'bun:sqlite'
import type { Ticket } from '../../src/contract/schemas.ts'
import { parseString } from 'fast-csv'

/**
 * Canary values written into the personal columns of every fixture ticket. They must never
 * appear in any response or log line; tests grep for them.
 */
export const CANARY = {
  customerName: 'CANARY-customer-Zoë-7f3a',
  notes: 'CANARY-notes-allergic-to-queues',
  partySize: 987_654_321,
  bearerHash: 'canarybearerhash0123456789abcdef0123456789abcdef0123456789abcd',
} as const

/** A ticket to write: the contract's fields, the lifecycle ones optional (null when left out). */
export type FixtureTicket = Pick<Ticket, 'id' | 'number' | 'queueId' | 'locationId' | 'createdAt'> & { status: string } &
  Partial<Omit<Ticket, 'id' | 'number' | 'queueId' | 'locationId' | 'status' | 'createdAt'>>

/** Locations and queues of the standard fixture: UTF-8 names, an empty location, an inactive queue. */
export function writeStructure(db: Database): void {
  db.exec(`
    INSERT INTO locations (id, name, slug) VALUES
      ('loc_b', 'Zürich Hauptbahnhof', 'zurich-hb'),
      ('loc_a', 'Amsterdam Centraal', 'amsterdam'),
      ('loc_empty', 'Ålesund (no queues yet)', 'alesund'),
      ('loc_a2', 'Amsterdam Centraal', 'amsterdam-2');
    INSERT INTO queues (id, location_id, name, slug, status) VALUES
      ('q_pay', 'loc_a', 'Payments', 'payments', 'ACTIVE'),
      ('q_id', 'loc_a', 'ID & Passports', 'id', 'ACTIVE'),
      ('q_old', 'loc_a', 'Archive desk', 'archive', 'INACTIVE'),
      ('q_zh', 'loc_b', 'Schalter 1 — Ämter', 'schalter-1', 'ACTIVE'),
      ('q_a2', 'loc_a2', 'General', 'general', 'ACTIVE');
    INSERT INTO device_sessions (id, location_id, device_name, started_at, ended_at) VALUES
      ('dev_1', 'loc_a', 'Desk 1', '2026-03-01T07:00:00.000Z', NULL);
  `)
}

/**
 * Gives the fixture's locations IANA zones, as the administration application writes them
 * (`locations.time_zone`, schema version 5): Zürich's and Amsterdam's own, the second Amsterdam
 * location in Chromium's spelling of India's (served as `Asia/Kolkata`), `loc_empty` none.
 */
export const FIXTURE_ZONES: Readonly<Record<string, string | null>> = { loc_a: 'Europe/Amsterdam', loc_a2: 'Asia/Calcutta', loc_b: 'Europe/Zurich', loc_empty: null }

export function writeLocationZones(db: Database, zones: Readonly<Record<string, string | null>> = FIXTURE_ZONES): void {
  const update = db.prepare('UPDATE locations SET time_zone = ? WHERE id = ?')
  db.transaction(() => {
    for (const [id, zone] of Object.entries(zones)) update.run(zone, id)
  })()
}

/** Inserts tickets with the canary values in their personal columns. */
export function writeTickets(db: Database, tickets: FixtureTicket[]): void {
  const insert = db.prepare(
    `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, called_at, completed_at, cancelled_at,
       skipped_at, no_show_at, called_by_device_session_id, customer_name, notes, party_size, bearer_hash)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  db.transaction(() => {
    for (const t of tickets) {
      insert.run(
        t.id, t.number, t.queueId, t.locationId, t.status, t.createdAt,
        t.calledAt ?? null, t.completedAt ?? null, t.cancelledAt ?? null, t.skippedAt ?? null, t.noShowAt ?? null,
        t.calledByDeviceSessionId ?? null,
        CANARY.customerName, CANARY.notes, CANARY.partySize, CANARY.bearerHash,
      )
    }
  })()
}

/** A small fixed set of tickets across the fixture's queues, with ties on createdAt. */
export function standardTickets(): FixtureTicket[] {
  return [
    { id: 't-001', number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: '2026-03-02T09:00:00.000Z', calledAt: '2026-03-02T09:05:00.000Z', completedAt: '2026-03-02T09:10:00.000Z', calledByDeviceSessionId: 'dev_1' },
    { id: 't-002', number: 2, queueId: 'q_pay', locationId: 'loc_a', status: 'CANCELED', createdAt: '2026-03-02T09:00:00.000Z', cancelledAt: '2026-03-02T09:03:00.000Z' },
    { id: 't-003', number: 1, queueId: 'q_id', locationId: 'loc_a', status: 'NO_SHOW', createdAt: '2026-03-02T10:00:00.000Z', calledAt: '2026-03-02T10:20:00.000Z', noShowAt: '2026-03-02T10:25:00.000Z', calledByDeviceSessionId: 'dev_1' },
    { id: 't-004', number: 1, queueId: 'q_zh', locationId: 'loc_b', status: 'SKIPPED', createdAt: '2026-03-03T08:00:00.000Z', calledAt: '2026-03-03T08:01:00.000Z', skippedAt: '2026-03-03T08:02:00.000Z' },
    { id: 't-005', number: 2, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: '2026-03-03T08:30:00.000Z' },
    { id: 't-006', number: 3, queueId: 'q_zh', locationId: 'loc_b', status: 'CALLED', createdAt: '2026-03-03T08:45:00.000Z', calledAt: '2026-03-03T08:50:00.000Z', calledByDeviceSessionId: 'dev_1' },
  ]
}

/**
 * Inserts `count` COMPLETED tickets in one SQL statement (fast enough for 200k rows): ids
 * `<idPrefix><i, 7 digits>`, one every `everySeconds` from `start`, called 30 s and completed
 * 90 s after creation, with the canary values in the personal columns (`notes` padded to
 * `notesWidth` characters when a test needs a bigger file).
 */
export interface BulkTickets {
  count: number
  idPrefix?: string
  start?: string
  everySeconds?: number
  queueId?: string
  locationId?: string
  notesWidth?: number
}

export function writeBulkTickets(db: Database, options: BulkTickets): void {
  const { count, idPrefix = 't', start = '2026-01-01', everySeconds = 60, queueId = 'q_pay', locationId = 'loc_a', notesWidth = 0 } = options
  const at = (offset: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ?2, '+' || (i * ?3) || ' seconds'${offset})`
  db.query(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
     INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, called_at, completed_at, customer_name, notes, party_size, bearer_hash)
     SELECT printf('%s%07d', ?4, i), i, ?5, ?6, 'COMPLETED', ${at('')}, ${at(", '+30 seconds'")}, ${at(", '+90 seconds'")},
            ?7, printf('%s%0*d', ?8, ?9, i), ?10, ?11
     FROM n`,
  ).run(count, start, everySeconds, idPrefix, queueId, locationId, CANARY.customerName, CANARY.notes, notesWidth, CANARY.partySize, CANARY.bearerHash)
}

/** Parses CSV with fast-csv: an independent reader, not our formatter. */
export function parseCsv(text: string): Promise<Record<string, string>[]> {
  return new Promise((resolve, reject) => {
    const rows: Record<string, string>[] = []
    parseString(text, { headers: true })
      .on('data', (row: Record<string, string>) => rows.push(row))
      .on('error', reject)
      .on('end', () => resolve(rows))
  })
}

/**
 * The tenant's tickets created in [from, to) as the administration application's file holds them
 * now, in the contract's shape and order (createdAt, then id): what the API must serve.
 */
export function ticketsInFile(db: Database, from: string, to: string, where = '1'): Ticket[] {
  return db
    .query(
      `SELECT id, number, queue_id AS queueId, location_id AS locationId, status, created_at AS createdAt, called_at AS calledAt,
         completed_at AS completedAt, cancelled_at AS cancelledAt, skipped_at AS skippedAt, no_show_at AS noShowAt,
         called_by_device_session_id AS calledByDeviceSessionId
       FROM tickets WHERE created_at >= ? AND created_at < ? AND ${where} ORDER BY created_at, id`,
    )
    .all(from, to) as Ticket[]
}
