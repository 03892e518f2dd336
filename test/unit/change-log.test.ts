import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { getTableColumns } from 'drizzle-orm'
import { openTenantForWriting } from '../../src/tenant/files.ts'
import { migrate } from '../../src/db/migrator.ts'
import { openWritableDatabase, ensurePrivateDirectory } from '../../src/db/files.ts'
import { TENANT_MIGRATIONS, TENANT_SCHEMA_VERSION } from '../../src/tenant/migrations.ts'
import { tenantDirectory, tenantFilePath } from '../../src/tenant/paths.ts'
import { tickets } from '../../src/tenant/schema.ts'
import { tempDataDir, openTenant } from '../support/harness.ts'
import { CANARY, writeStructure, writeTickets } from '../support/fixtures.ts'

/**
 * The change log of tenant schema version 3, as a writer meets it: the triggers record every
 * change of a served column in the writer's own transaction. Plain SQL on a second connection,
 * as the administration application would write.
 */

let dir: string
let cleanup: () => void
let db: Database
beforeEach(() => {
  ;({ dir, cleanup } = tempDataDir())
  openTenantForWriting(dir, 'org_log').close()
  db = openTenant(dir, 'org_log')
  writeStructure(db)
})
afterEach(() => {
  db.close()
  cleanup()
})

const log = () => db.query('SELECT version, ticket_id AS id, created_at AS createdAt FROM ticket_changes ORDER BY version').all() as { version: number; id: string; createdAt: string }[]
const versionOf = (id: string) => log().find((row) => row.id === id)?.version
const ticket = (id: string, createdAt = '2026-03-02T09:00:00.000Z') => ({ id, number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt })

describe('tenant schema version 3: the change log', () => {
  test('an insert records the ticket with its created_at; versions grow, one row per ticket', () => {
    writeTickets(db, [ticket('a', '2026-03-02T09:00:00.000Z'), ticket('b', '2026-03-01T08:00:00.000Z')])
    expect(log()).toEqual([
      { version: 1, id: 'a', createdAt: '2026-03-02T09:00:00.000Z' },
      { version: 2, id: 'b', createdAt: '2026-03-01T08:00:00.000Z' },
    ])
    db.exec(`UPDATE tickets SET status = 'CALLED', called_at = '2026-03-02T09:05:00.000Z' WHERE id = 'a'`)
    expect(log()).toEqual([
      { version: 2, id: 'b', createdAt: '2026-03-01T08:00:00.000Z' },
      { version: 3, id: 'a', createdAt: '2026-03-02T09:00:00.000Z' },
    ])
  })

  test('every served column is a change; a personal column alone, or served values written unchanged, are not', () => {
    writeTickets(db, [ticket('a')])
    const served: [string, string][] = [
      ['number', '2'], ['queue_id', `'q_id'`], ['location_id', `'loc_b'`], ['status', `'CALLED'`],
      ['created_at', `'2026-03-02T09:00:01.000Z'`], ['called_at', `'2026-03-02T09:05:00.000Z'`],
      ['completed_at', `'2026-03-02T09:06:00.000Z'`], ['cancelled_at', `'2026-03-02T09:07:00.000Z'`],
      ['skipped_at', `'2026-03-02T09:08:00.000Z'`], ['no_show_at', `'2026-03-02T09:09:00.000Z'`],
      ['called_by_device_session_id', `'dev_1'`],
    ]
    for (const [column, value] of served) {
      const before = versionOf('a')!
      db.exec(`UPDATE tickets SET ${column} = ${value} WHERE id = 'a'`)
      expect({ column, changed: versionOf('a')! > before }).toEqual({ column, changed: true })
    }
    const before = versionOf('a')
    for (const column of ['customer_name', 'notes', 'bearer_hash']) db.exec(`UPDATE tickets SET ${column} = 'edited' WHERE id = 'a'`)
    db.exec(`UPDATE tickets SET party_size = 3 WHERE id = 'a'`)
    // An ORM that writes every column on each save, of which only a personal one differs.
    db.exec(`UPDATE tickets SET status = status, created_at = created_at, called_at = called_at, notes = 'again' WHERE id = 'a'`)
    expect(versionOf('a')).toBe(before)
    expect(log()).toHaveLength(1)
  })

  test('a ticket whose id changes moves in the log; a deleted ticket leaves it', () => {
    writeTickets(db, [ticket('a'), ticket('b')])
    db.exec(`UPDATE tickets SET id = 'a2' WHERE id = 'a'`)
    expect(log().map((row) => row.id)).toEqual(['b', 'a2'])
    db.exec(`DELETE FROM tickets WHERE id = 'b'`)
    expect(log().map((row) => row.id)).toEqual(['a2'])
  })

  test('versions are never reused, also after the highest row left the log', () => {
    writeTickets(db, [ticket('a'), ticket('b')])
    db.exec(`DELETE FROM tickets WHERE id = 'b'`) // version 2 leaves; the delete's tombstone takes 3
    writeTickets(db, [ticket('c')])
    expect(versionOf('c')).toBe(4)
  })

  test("a writer's own conflict clause neither skips the record nor fails the writer", () => {
    writeTickets(db, [ticket('a'), ticket('b')])
    const before = versionOf('a')!
    db.exec(`UPDATE OR IGNORE tickets SET status = 'CALLED' WHERE id = 'a'`)
    expect(versionOf('a')!).toBeGreaterThan(before)
    db.exec(`UPDATE OR ABORT tickets SET status = 'COMPLETED' WHERE id = 'a'`)
    db.exec(`UPDATE OR FAIL tickets SET status = 'CANCELED' WHERE id = 'b'`)
    const replaced = versionOf('a')!
    // INSERT OR REPLACE deletes the old row without the delete trigger, then inserts.
    db.exec(`INSERT OR REPLACE INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('a', 9, 'q_pay', 'loc_a', 'NO_SHOW', '2026-03-04T00:00:00.000Z')`)
    expect(log().at(-1)).toEqual({ version: replaced + 2, id: 'a', createdAt: '2026-03-04T00:00:00.000Z' })
    db.exec(`INSERT OR IGNORE INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('a', 9, 'q_pay', 'loc_a', 'WAITING', '2026-03-04T00:00:00.000Z')`)
    expect(log()).toHaveLength(2)
    expect(versionOf('a')).toBe(replaced + 2)
  })

  test('the change and its record commit or roll back together', () => {
    writeTickets(db, [ticket('a')])
    const before = log()
    db.exec('BEGIN')
    db.exec(`UPDATE tickets SET status = 'CALLED' WHERE id = 'a'`)
    db.exec('ROLLBACK')
    expect(log()).toEqual(before)
  })

  test('the update trigger watches exactly the 12 served columns; both copy exactly them', () => {
    const personal = new Set(['customer_name', 'notes', 'party_size', 'bearer_hash'])
    const served = Object.values(getTableColumns(tickets)).map((column) => column.name).filter((name) => !personal.has(name)).sort()
    expect(served).toHaveLength(12)
    const sqlOf = (name: string) => (db.query(`SELECT sql FROM sqlite_schema WHERE name = ?`).get(name) as { sql: string }).sql
    const update = sqlOf('ticket_changes_after_update')
    const watched = /UPDATE OF ([\s\S]+?) ON tickets/.exec(update)![1]!.split(',').map((name) => name.trim()).sort()
    expect(watched).toEqual(served)
    for (const column of served) expect(update).toContain(`OLD.${column} IS NOT NEW.${column}`)
    for (const trigger of ['ticket_changes_after_insert', 'ticket_changes_after_update']) {
      const copied = /VALUES \(([\s\S]+?)\);/.exec(sqlOf(trigger))![1]!.split(',').map((value) => value.trim().replace(/^NEW\./, '')).sort()
      expect(copied).toEqual(served)
    }
    for (const name of ['ticket_changes', 'ticket_changes_after_insert', 'ticket_changes_after_update', 'ticket_changes_after_delete']) {
      for (const column of personal) expect(sqlOf(name)).not.toContain(column)
    }
  })

  test("the log's copy of a ticket's served columns equals the ticket's, after every kind of write", () => {
    writeTickets(db, [ticket('a'), ticket('b'), ticket('c'), {
      ...ticket('d'), status: 'COMPLETED', calledAt: '2026-03-02T09:01:00.000Z', completedAt: '2026-03-02T09:02:00.000Z', cancelledAt: '2026-03-02T09:03:00.000Z',
      skippedAt: '2026-03-02T09:04:00.000Z', noShowAt: '2026-03-02T09:05:00.000Z', calledByDeviceSessionId: 'dev_1',
    }])
    db.exec(`UPDATE tickets SET status = 'CALLED', called_at = '2026-03-02T09:05:00.000Z', called_by_device_session_id = 'dev_1' WHERE id = 'a'`)
    db.exec(`UPDATE tickets SET number = 7, queue_id = 'q_zh', location_id = 'loc_b', created_at = '2026-03-03T00:00:00.000Z' WHERE id = 'b'`)
    db.exec(`UPDATE tickets SET status = 'COMPLETED', completed_at = '2026-03-02T09:09:00.000Z', notes = 'n' WHERE id = 'a'`)
    db.exec(`INSERT OR REPLACE INTO tickets (id, number, queue_id, location_id, status, created_at, no_show_at) VALUES ('c', 3, 'q_id', 'loc_a', 'NO_SHOW', '2026-03-04T00:00:00.000Z', '2026-03-04T01:00:00.000Z')`)
    db.exec(`UPDATE tickets SET id = 'c2', cancelled_at = '2026-03-04T02:00:00.000Z', skipped_at = '2026-03-04T03:00:00.000Z' WHERE id = 'c'`)
    const served = 'number, queue_id, location_id, status, created_at, called_at, completed_at, cancelled_at, skipped_at, no_show_at, called_by_device_session_id'
    const fromTickets = db.query(`SELECT id, ${served} FROM tickets ORDER BY id`).all()
    const fromLog = db.query(`SELECT ticket_id AS id, ${served} FROM ticket_changes ORDER BY ticket_id`).all()
    expect(fromLog).toEqual(fromTickets)
    expect(fromLog).toHaveLength(4)
  })
})

describe('migrating to version 3', () => {
  test('a version-2 file with tickets gets the log, the triggers and a random history id; its tickets are not logged', () => {
    const path = tenantFilePath(dir, 'org_v2')
    ensurePrivateDirectory(tenantDirectory(dir))
    const v2 = openWritableDatabase(path, 5000)
    migrate(v2, TENANT_MIGRATIONS.slice(0, 2))
    writeStructure(v2)
    writeTickets(v2, [ticket('old')])
    v2.close()

    const migrated = openTenantForWriting(dir, 'org_v2')
    try {
      expect(migrated.query('PRAGMA user_version').get()).toEqual({ user_version: TENANT_SCHEMA_VERSION })
      const triggers = (migrated.query(`SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'ticket_changes_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name)
      expect(triggers).toEqual(['ticket_changes_after_delete', 'ticket_changes_after_insert', 'ticket_changes_after_update'])
      // Unchanged since the migration, so after any token the migrated file can give out.
      expect(migrated.query('SELECT count(*) AS n FROM ticket_changes').get()).toEqual({ n: 0 })
      const history = (migrated.query('SELECT history_id AS id FROM change_history').all() as { id: string }[]).map((r) => r.id)
      const other = (db.query('SELECT history_id AS id FROM change_history').get() as { id: string }).id
      expect(history).toHaveLength(1)
      expect(history[0]).toMatch(/^[0-9a-f]{32}$/)
      expect(history[0]).not.toBe(other)
      expect(() => migrated.exec(`INSERT INTO change_history VALUES (2, 'x')`)).toThrow(/CHECK/)
      // The contract's tables and the personal values are untouched.
      expect(migrated.query(`SELECT customer_name AS name FROM tickets WHERE id = 'old'`).get()).toEqual({ name: CANARY.customerName })
    } finally {
      migrated.close()
    }
  })
})

describe('the deletion log', () => {
  const tombstones = () => db.query('SELECT version, ticket_id AS id, created_at AS createdAt FROM ticket_deletions ORDER BY version').all()

  test("a writer's delete leaves a tombstone versioned with the change log; made again, the id is no longer deleted", () => {
    writeTickets(db, [ticket('a'), ticket('b', '2026-03-01T08:00:00.000Z')])
    db.exec(`DELETE FROM tickets WHERE id = 'b'`)
    expect(tombstones()).toEqual([{ version: 3, id: 'b', createdAt: '2026-03-01T08:00:00.000Z' }])
    writeTickets(db, [ticket('c')])
    expect(versionOf('c')).toBe(4)
    // The token's position (sqlite_sequence) covers the delete.
    expect(db.query("SELECT seq FROM sqlite_sequence WHERE name = 'ticket_changes'").get()).toEqual({ seq: 4 })
    writeTickets(db, [ticket('b')])
    expect(tombstones()).toEqual([])
  })

  test('a ticket whose id changes is the old id deleted; a delete rolled back leaves nothing', () => {
    writeTickets(db, [ticket('a')])
    db.exec(`UPDATE tickets SET id = 'a2' WHERE id = 'a'`)
    expect(tombstones()).toEqual([{ version: 2, id: 'a', createdAt: '2026-03-02T09:00:00.000Z' }])
    db.exec('BEGIN')
    db.exec(`DELETE FROM tickets WHERE id = 'a2'`)
    db.exec('ROLLBACK')
    expect(tombstones()).toHaveLength(1)
  })

  test('the first delete on a file whose change log never had a row still takes a version above 0', () => {
    db.exec(`DELETE FROM sqlite_sequence WHERE name = 'ticket_changes'`)
    db.exec(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) SELECT 'z', 1, 'q_pay', 'loc_a', 'WAITING', '2026-03-02T09:00:00.000Z'`)
    db.exec(`DELETE FROM ticket_changes; DELETE FROM sqlite_sequence WHERE name = 'ticket_changes'`)
    db.exec(`DELETE FROM tickets WHERE id = 'z'`)
    expect(tombstones()).toEqual([{ version: 1, id: 'z', createdAt: '2026-03-02T09:00:00.000Z' }])
  })
})
