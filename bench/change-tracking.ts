import { Database } from 'bun:sqlite'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bigTenantFile, type BigTenant } from './data.ts'
import { openWritableDatabase } from '../src/db/files.ts'
import { migrate } from '../src/db/migrator.ts'
import { TENANT_MIGRATIONS } from '../src/tenant/migrations.ts'
import { openTenantForWriting } from '../src/tenant/files.ts'
import { tenantDirectory, tenantFilePath } from '../src/tenant/paths.ts'
import { Random } from '../src/seed/random.ts'

/** What the `changes` scenario writes: the administration application's writes, with and without the change log's triggers. */

/** Tickets the writer inserts and then updates, on each fresh file. */
export const WRITER_TICKETS = 100_000

/** What one writer run cost on a fresh file: seconds for the inserts and for the updates, and the file's size after both. */
export interface WriterRun {
  insertSeconds: number
  updateSeconds: number
  bytes: number
}

/**
 * On a fresh tenant file at schema `version` (2: no triggers; 3: the change log's triggers; 4: and the value rules' triggers), in
 * a private temp directory removed after: the bulk insert of WRITER_TICKETS tickets (one
 * transaction), then a status update of each by id (1,000 to a transaction).
 */
export function writerRun(version: 2 | 3 | 4): WriterRun {
  const dir = mkdtempSync(join(tmpdir(), 'bench-changes-'))
  try {
    mkdirSync(tenantDirectory(dir), { recursive: true })
    const path = join(tenantDirectory(dir), 'org_bench.sqlite')
    const db = openWritableDatabase(path, 5000)
    try {
      migrate(db, TENANT_MIGRATIONS.slice(0, version))
      db.exec(`
        INSERT INTO locations VALUES ('loc_a', 'A', 'a'), ('loc_b', 'B', 'b');
        INSERT INTO queues VALUES ('q_1', 'loc_a', 'One', 'one', 'ACTIVE'), ('q_2', 'loc_a', 'Two', 'two', 'ACTIVE'), ('q_3', 'loc_b', 'Three', 'three', 'ACTIVE');
      `)
      const insertSeconds = bulkInsert(db)
      const updateSeconds = statusUpdates(db)
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      return { insertSeconds, updateSeconds, bytes: statSync(path).size }
    } finally {
      db.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const ticketId = (i: number) => `tkt_${String(i).padStart(8, '0')}`

/** As the administration application writes: one prepared INSERT per ticket, personal columns filled. */
function bulkInsert(db: Database): number {
  const insert = db.prepare(
    `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, customer_name, notes, party_size, bearer_hash)
     VALUES (?, ?, ?, ?, 'WAITING', ?, 'A Customer', 'a note', 2, 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1')`,
  )
  const start = Date.parse('2026-03-01T07:00:00.000Z')
  const started = performance.now()
  db.transaction(() => {
    for (let i = 0; i < WRITER_TICKETS; i++) {
      const queue = i % 3
      insert.run(ticketId(i), i, `q_${queue + 1}`, queue === 2 ? 'loc_b' : 'loc_a', new Date(start + i * 7_000).toISOString())
    }
  })()
  return (performance.now() - started) / 1000
}

/** Every ticket called, by id, in transactions of 1,000 (a desk's day in a busy office, replayed). */
function statusUpdates(db: Database): number {
  const update = db.prepare(`UPDATE tickets SET status = 'CALLED', called_at = ?, called_by_device_session_id = NULL WHERE id = ?`)
  const calledAt = '2026-03-20T10:00:00.000Z'
  const started = performance.now()
  for (let first = 0; first < WRITER_TICKETS; first += 1000) {
    db.transaction(() => {
      for (let i = first; i < first + 1000; i++) update.run(calledAt, ticketId(i))
    })()
  }
  return (performance.now() - started) / 1000
}

/**
 * A copy of the big tenant (and the control file, for its tokens) in `dataDir`, migrated to the
 * newest schema as `admin migrate` would: the changes the scenario makes must not alter the
 * shared benchmark data. Returns the seconds the migration took.
 */
export function copyBigTenant(big: BigTenant, dataDir: string): number {
  rmSync(dataDir, { recursive: true, force: true })
  mkdirSync(tenantDirectory(dataDir), { recursive: true })
  copyFileSync(join(big.dataDir, 'control.sqlite'), join(dataDir, 'control.sqlite'))
  copyFileSync(bigTenantFile(big), tenantFilePath(dataDir, big.bigOrgId))
  const started = performance.now()
  openTenantForWriting(dataDir, big.bigOrgId).close()
  return (performance.now() - started) / 1000
}

/** As the administration application would: `count` tickets spread over the whole range cancelled, in one transaction. */
export function cancelTickets(file: string, count: number): void {
  const writer = new Database(file)
  try {
    writer.exec('PRAGMA busy_timeout = 5000')
    const ids = (writer.query('SELECT id FROM tickets').all() as { id: string }[]).map((row) => row.id)
    const random = new Random('bench-changes')
    const chosen = new Set<string>()
    while (chosen.size < count) chosen.add(random.pick(ids))
    const update = writer.prepare(`UPDATE tickets SET status = 'CANCELED', cancelled_at = '2026-06-30T17:00:00.000Z' WHERE id = ?`)
    writer.transaction(() => {
      for (const id of chosen) update.run(id)
    })()
  } finally {
    writer.close()
  }
}
