import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { openTenantForWriting } from '../../src/tenant/files.ts'
import { bindValues, compileTicketQuery } from '../../src/tickets/repository.ts'
import { parseTicketQuery } from '../../src/tickets/query.ts'
import { tempDataDir } from '../support/harness.ts'
import { TICKET_FILTERS } from '../../src/contract/vocabulary.ts'

/** Plans are checked, not timed: the benchmark measures the time (bun run bench). */
describe('ticket query plans on 200k rows', () => {
  let db: Database
  let cleanup: () => void

  beforeAll(() => {
    const temp = tempDataDir()
    cleanup = temp.cleanup
    db = openTenantForWriting(temp.dir, 'org_plans')
    db.exec(`
      INSERT INTO locations (id, name, slug) VALUES ('l1','L1','l1'),('l2','L2','l2');
      INSERT INTO queues VALUES ('q1','l1','Q1','q1','ACTIVE'),('q2','l1','Q2','q2','ACTIVE'),('q3','l2','Q3','q3','ACTIVE');
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 199999)
      INSERT INTO tickets (id, number, queue_id, location_id, status, created_at)
      SELECT printf('t%06d', i), i, 'q' || (i % 3 + 1), CASE i % 3 WHEN 2 THEN 'l2' ELSE 'l1' END,
             CASE i % 7 WHEN 0 THEN 'WAITING' WHEN 1 THEN 'CANCELED' ELSE 'COMPLETED' END,
             strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i * 30) || ' seconds')
      FROM n;
      ANALYZE;
    `)
  })
  afterAll(() => {
    db.close()
    cleanup()
  })

  const filterSets: Record<string, string> = {
    'no filter': '',
    'one queue': '&queueId=q1',
    'several queues': '&queueId=q1&queueId=q2',
    location: '&locationId=l1',
    status: '&status=WAITING',
    'several statuses': '&status=WAITING&status=CANCELED',
    'all combined': '&queueId=q1&queueId=q3&locationId=l1&status=COMPLETED&status=WAITING',
    'all combined, single values': '&queueId=q1&locationId=l1&status=COMPLETED',
  }

  const indexOf = (plan: string) => /USING (?:COVERING )?INDEX (\w+)/.exec(plan)?.[1]

  function plan(filters: string, after: { createdAt: string; id: string } | null) {
    const query = parseTicketQuery(new URLSearchParams(`from=2026-01-01&to=2026-03-31${filters}&limit=500`), 'page')
    const compiled = compileTicketQuery(query, { afterCursor: after !== null, withLimit: true })
    const rows = db.query(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...bindValues(compiled, query, { after, limit: 501 })) as { detail: string }[]
    return rows.map((r) => r.detail).join(' | ')
  }

  /** The index each filter set must walk, by name: a filter alone its row's (TICKET_FILTERS), none the range's own. */
  const RANGE_INDEX = 'tickets_created_at_id'
  const rowIndex = (parameter: string) => TICKET_FILTERS.find((filter) => filter.parameter === parameter)!.index
  const expectedIndex: Record<string, string[]> = {
    'no filter': [RANGE_INDEX],
    'one queue': [rowIndex('queueId')],
    // Several values of one filter: its index, or the range's when they cover much of the range
    // (here two thirds of the queues, two of seven statuses' share): the planner's choice.
    'several queues': [rowIndex('queueId'), RANGE_INDEX],
    location: [rowIndex('locationId')],
    status: [rowIndex('status')],
    'several statuses': [rowIndex('status'), RANGE_INDEX],
    // Several filters: the planner may take any of theirs, by its statistics, never the whole range.
    'all combined': TICKET_FILTERS.map((filter) => filter.index),
    'all combined, single values': TICKET_FILTERS.map((filter) => filter.index),
  }

  test('every filter has a row in the sets above, and names an index of the tenant schema of its own column', () => {
    const indexes = db.query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tickets'`).all() as { name: string; sql: string | null }[]
    for (const filter of TICKET_FILTERS) {
      const column = filter.field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
      const index = indexes.find((candidate) => candidate.name === filter.index)
      expect({ filter: filter.parameter, sql: index?.sql }).toEqual({ filter: filter.parameter, sql: expect.stringContaining(`(${column}, created_at, id)`) })
      expect(Object.entries(filterSets).some(([name, query]) => query === `&${filter.parameter}=${query.split('=')[1]}` && expectedIndex[name]?.[0] === filter.index)).toBe(true)
    }
  })

  for (const [name, filters] of Object.entries(filterSets)) {
    test(`${name}: an index search, no table scan, no temporary sort; the last page plans like the first`, () => {
      expect(expectedIndex[name]).toContain(indexOf(plan(filters, null))!)
      const first = plan(filters, null)
      const last = plan(filters, { createdAt: '2026-03-11T10:39:30.000Z', id: 't199999' })
      expect(first).toMatch(/SEARCH tickets USING (COVERING )?INDEX/)
      expect(first).not.toContain('TEMP B-TREE')
      expect(first).not.toContain('SCAN tickets')
      expect(last).toMatch(/SEARCH tickets USING (COVERING )?INDEX/)
      expect(last).not.toContain('TEMP B-TREE')
      // The last page seeks straight to the cursor's position in the same index, rather than
      // starting at `from` and filtering its way there (which would make page N cost N pages).
      expect(last).toContain('(created_at,id)>(?,?)')
      expect(indexOf(last)).toBe(indexOf(first))
    })
  }

  // changedAfter (docs/api.md#loading-incrementally): the page starts from the changed tickets, a
  // range of the change log's integer primary key, whose rows hold the served columns: it never
  // walks the range of created_at, nor reads tickets one by one. The log here holds every ticket
  // (all were inserted after version 3's triggers), so a plan that walked it would read 200k rows.
  const changedAfterPlan = (database: Database, filters: string, range: string, shape: { afterCursor: boolean; withLimit: boolean }, after: { createdAt: string; id: string } | null, since: number) => {
    const query = parseTicketQuery(new URLSearchParams(`${range}${filters}&limit=500`), 'page')
    const compiled = compileTicketQuery(query, { ...shape, changedAfter: true })
    const values = bindValues(compiled, query, { after, limit: shape.withLimit ? 501 : undefined, sinceVersion: since })
    return (database.query(`EXPLAIN QUERY PLAN ${compiled.sql}`).all(...values) as { detail: string }[]).map((r) => r.detail)
  }
  const expectChangedAfterPlan = (steps: string[]) => {
    expect(steps[0]).toBe('SEARCH ticket_changes USING INTEGER PRIMARY KEY (rowid>?)')
    expect(steps.join(' | ')).not.toMatch(/SCAN ticket_changes|\btickets\b/)
  }

  for (const [name, filters] of Object.entries(filterSets)) {
    test(`changedAfter, ${name}: a range of the change log's versions, nothing of tickets; first and last page, and the export`, () => {
      const range = 'from=2026-01-01&to=2026-03-31'
      expectChangedAfterPlan(changedAfterPlan(db, filters, range, { afterCursor: false, withLimit: true }, null, 199_000))
      expectChangedAfterPlan(changedAfterPlan(db, filters, range, { afterCursor: true, withLimit: true }, { createdAt: '2026-03-11T10:39:30.000Z', id: 't199999' }, 199_000))
      expectChangedAfterPlan(changedAfterPlan(db, filters, range, { afterCursor: false, withLimit: false }, null, 199_000))
    })
  }

  test('the same plans without statistics (a file the administration application never analysed)', () => {
    const temp = tempDataDir()
    const fresh = openTenantForWriting(temp.dir, 'org_fresh')
    try {
      fresh.exec(`
        INSERT INTO locations (id, name, slug) VALUES ('l1','L1','l1');
        INSERT INTO queues VALUES ('q1','l1','Q1','q1','ACTIVE');
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
        INSERT INTO tickets (id, number, queue_id, location_id, status, created_at)
        SELECT printf('t%06d', i), i, 'q1', 'l1', 'WAITING', strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i * 30) || ' seconds') FROM n;
      `)
      for (const filters of Object.values(filterSets)) {
        expectChangedAfterPlan(changedAfterPlan(fresh, filters, 'from=2026-01-01&to=2026-01-02', { afterCursor: false, withLimit: true }, null, 9_000))
      }
    } finally {
      fresh.close()
      temp.cleanup()
    }
  })

  test('the page query never reads a personal column', () => {
    const query = parseTicketQuery(new URLSearchParams('from=2026-01-01&to=2026-03-31'), 'page')
    for (const changedAfter of [false, true]) {
      const sql = compileTicketQuery(query, { afterCursor: true, withLimit: true, changedAfter }).sql
      for (const column of ['customer_name', 'notes', 'party_size', 'bearer_hash']) expect(sql).not.toContain(column)
      expect(sql).not.toMatch(/select \*/i)
      expect(sql).not.toMatch(/offset/i)
    }
  })
})
