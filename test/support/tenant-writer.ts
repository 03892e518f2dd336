/**
 * Plays the administration application in a separate process: writes a tenant file
 * continuously, in recognisable batches, until killed.
 *   bun test/support/tenant-writer.ts <tenant file> <from ms> <to ms> <batch size>
 * Each batch `b<n>-<i>` is inserted in one transaction with createdAt spread over the whole
 * range; between inserts, one earlier batch has all its statuses changed in one transaction.
 * A reader that sees one snapshot therefore sees every batch whole, with one status per batch.
 */
import { Database } from 'bun:sqlite'

const [file, fromArg, toArg, sizeArg] = process.argv.slice(2)
const from = Number(fromArg)
const span = Number(toArg) - from
const size = Number(sizeArg)
const db = new Database(file!)
db.exec('PRAGMA busy_timeout = 5000')
const insert = db.prepare(
  `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, customer_name, notes, party_size, bearer_hash)
   VALUES (?, ?, 'q_pay', 'loc_a', 'WAITING', ?, 'CANARY-customer-Zoë-7f3a', 'CANARY-notes-allergic-to-queues', 987654321, 'canarybearerhash0123456789abcdef0123456789abcdef0123456789abcd')`,
)
const update = db.prepare(`UPDATE tickets SET status = ? WHERE id >= ? AND id < ?`)
const statuses = ['CALLED', 'COMPLETED', 'CANCELED', 'SKIPPED', 'NO_SHOW']
let batch = 0
for (;;) {
  db.transaction(() => {
    for (let i = 0; i < size; i++) {
      const at = from + Math.floor(((i + Math.random()) / size) * span)
      insert.run(`b${String(batch).padStart(6, '0')}-${String(i).padStart(3, '0')}`, batch, new Date(at).toISOString())
    }
  })()
  if (batch > 0) {
    const target = `b${String(Math.floor(Math.random() * batch)).padStart(6, '0')}`
    db.transaction(() => update.run(statuses[batch % statuses.length]!, `${target}-`, `${target}.`))()
  }
  // Readers start once the first batch is in, so that every export has batches to check.
  if (batch++ === 0) process.stdout.write('ready\n')
  await Bun.sleep(2)
}
