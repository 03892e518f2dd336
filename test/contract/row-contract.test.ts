import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { CONTRACT_TRIGGERS } from '../../src/tenant/row-check.ts'
import { TENANT_SCHEMA_VERSION } from '../../src/tenant/migrations.ts'

/**
 * The API never serves a row that breaks the tenant contract's value rules
 * (docs/operations.md#what-a-row-must-hold): on a file that does not vouch for its rows (older
 * than version 4), a page, /v1/queues or an export that would serve one is 503 data_unavailable,
 * as JSON before any byte of data, and the log names the row.
 */

let server: TestServer
let token: string
let organisationId: string
beforeEach(async () => {
  refusedIds.clear()
  server = await startServer()
  ;({ token, org: { id: organisationId } } = server.seeded())
})
afterEach(() => server.close())

const PAGE = '/v1/tickets?from=2026-03-01T00:00:00Z&to=2026-03-31T00:00:00Z'
const EXPORT = '/v1/exports/tickets.csv?from=2026-03-01T00:00:00Z&to=2026-03-31T00:00:00Z'
/** Ranges that end before the bad row (created 2026-03-04). */
const PAGE_BEFORE = '/v1/tickets?from=2026-03-01T00:00:00Z&to=2026-03-04T00:00:00Z'
const EXPORT_BEFORE = '/v1/exports/tickets.csv?from=2026-03-01T00:00:00Z&to=2026-03-04T00:00:00Z'

/** Writes to the organisation's file as another program would; `older` first makes it a file of version 3 (no triggers). */
function write(sql: string, older = true, values: unknown[] = []): void {
  const db: Database = openTenant(server.dataDir, organisationId)
  if (older) {
    for (const name of CONTRACT_TRIGGERS) db.exec(`DROP TRIGGER IF EXISTS ${name}`)
    db.exec('PRAGMA user_version = 3')
  }
  db.query(sql).run(...(values as never[]))
  db.close()
}

function addTicket(): void {
  write(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('t_bad', 7, 'q_pay', 'loc_a', 'WAITING', '2026-03-04T10:00:00.000Z')`)
}

/** The 503s answered so far, by request id. */
const refusedIds = new Set<string>()

async function expectRefused(path: string, columns: string[]): Promise<void> {
  const response = await server.get(path, token)
  expect(response.status).toBe(503)
  expect(response.headers.get('content-type')).toStartWith('application/json')
  const body = (await response.json()) as { error: string; message: string; requestId: string }
  expect(body.error).toBe('data_unavailable')
  expect(body.message).toContain('(its data file holds a row that breaks the tenant contract)')
  refusedIds.add(body.requestId)
  // Logged once per row and rule (as every reason a file cannot be served), with the request that met it first.
  const logged = server.logger.lines
    .map((line) => JSON.parse(line))
    .filter((line) => line.event === 'tenant_unavailable' && JSON.stringify(line.columns) === JSON.stringify(columns))
  expect(logged).toHaveLength(1)
  expect(logged[0]).toMatchObject({ organisationId, table: path.includes('queues') ? expect.any(String) : 'tickets', reason: expect.stringContaining('a row breaks the tenant contract') })
  // The ticket's id, unless the id itself is the breach.
  if (path.includes('tickets')) expect(logged[0].rowId).toBe(columns.includes('id') ? null : 't_bad')
  expect(refusedIds.has(logged[0].requestId)).toBe(true)
}

describe('a ticket that breaks a rule is never served', () => {
  test.each([
    ['a BLOB in called_at', `UPDATE tickets SET called_at = x'00ff' WHERE id = 't_bad'`, [], ['called_at']],
    ['text in number', `UPDATE tickets SET number = 'abc' WHERE id = 't_bad'`, [], ['number']],
    ['a number beyond 32 bits', `UPDATE tickets SET number = 3000000000 WHERE id = 't_bad'`, [], ['number']],
    ['a number beyond 2^53', `UPDATE tickets SET number = ? WHERE id = 't_bad'`, [9_007_199_254_740_993n], ['number']],
    ['a NUL in queue_id', `UPDATE tickets SET queue_id = 'q_pay' || char(0) WHERE id = 't_bad'`, [], ['queue_id']],
    ['a created_at not in the canonical form', `UPDATE tickets SET created_at = '2026-03-04T10:00:00Z' WHERE id = 't_bad'`, [], ['created_at']],
  ])('%s: pages and the export that would hold it are 503 as JSON, the others are served', async (_, sql, values, columns) => {
    addTicket()
    write(sql, true, values)
    await expectRefused(PAGE, columns)
    await expectRefused(EXPORT, columns)
    expect((await server.get(PAGE_BEFORE, token)).status).toBe(200)
    const csv = await server.get(EXPORT_BEFORE, token)
    expect(csv.status).toBe(200)
    expect(csv.headers.get('content-type')).toStartWith('text/csv')
    // The row corrected: served again, no restart.
    write(`UPDATE tickets SET number = 7, called_at = NULL, queue_id = 'q_pay', created_at = '2026-03-04T10:00:00.000Z' WHERE id = 't_bad'`)
    expect((await server.get(PAGE, token)).status).toBe(200)
    expect((await server.get(EXPORT, token)).status).toBe(200)
  })

  test('an empty id is refused too, and logged without an id to show', async () => {
    write(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('', 7, 'q_pay', 'loc_a', 'WAITING', '2026-03-04T10:00:00.000Z')`)
    await expectRefused(PAGE, ['id'])
    await expectRefused(EXPORT, ['id'])
  })

  test('a bad row changed after the export read its token is in the changedAfter page, and refused there', async () => {
    write('SELECT 1')
    const first = await server.get(PAGE, token)
    const changes = first.headers.get('x-changes-token')!
    addTicket()
    write(`UPDATE tickets SET called_at = x'00ff' WHERE id = 't_bad'`)
    await expectRefused(`${PAGE}&changedAfter=${encodeURIComponent(changes)}`, ['called_at'])
  })
})

test('/v1/queues with a NUL in a location name or a BLOB queue status is 503', async () => {
  write(`UPDATE locations SET name = 'Amsterdam' || char(0) WHERE id = 'loc_a'`)
  await expectRefused('/v1/queues', ['name'])
  write(`UPDATE locations SET name = 'Amsterdam' WHERE id = 'loc_a'`)
  expect((await server.get('/v1/queues', token)).status).toBe(200)
  write(`UPDATE queues SET status = x'41' WHERE id = 'q_old'`)
  await expectRefused('/v1/queues', ['status'])
})

test('a version-4 file whose triggers were dropped by hand no longer vouches for its rows: they are checked', async () => {
  write(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('t_bad', 7, 'q_pay', 'loc_a', 'WAITING', '2026-03-04T10:00:00.000Z')`, false)
  expect(() => write(`UPDATE tickets SET called_at = x'00ff' WHERE id = 't_bad'`, false)).toThrow('tenant contract: tickets.called_at')
  const db = openTenant(server.dataDir, organisationId)
  for (const name of CONTRACT_TRIGGERS) db.exec(`DROP TRIGGER ${name}`)
  db.exec(`UPDATE tickets SET called_at = x'00ff' WHERE id = 't_bad'`)
  expect(db.query('PRAGMA user_version').get()).toEqual({ user_version: TENANT_SCHEMA_VERSION })
  db.close()
  await expectRefused(PAGE, ['called_at'])
  await expectRefused(EXPORT, ['called_at'])
})
