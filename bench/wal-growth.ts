/**
 * How much a tenant's WAL grows while exports hold their snapshots and the administration
 * application keeps writing (docs/operations.md#exports-and-the-wal).
 *   node_modules/.bin/bun bench/wal-growth.ts [seconds per phase, default 20]
 * One server in this process over a temporary data directory, a writer in this process on its
 * own connection (50 rows of about 400 bytes per transaction every 10 ms, SQLite's default
 * auto-checkpoint), and exports whose readers never read (the worst case: the snapshot is held
 * until EXPORT_STALL_TIMEOUT_MS). Phases: no export; two exports held the whole phase (the
 * default EXPORTS_PER_TOKEN); after they ended; after one `PRAGMA wal_checkpoint(TRUNCATE)`.
 */
import { statSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { createApp } from '../src/app.ts'
import { configWith } from '../src/config/config.ts'
import { memoryLogger } from '../src/logger.ts'
import { createOrganisationWithTenant } from '../src/control/provisioning.ts'
import { tenantFilePath } from '../src/tenant/paths.ts'
import { writeBulkTickets, writeStructure } from '../test/support/fixtures.ts'
import { RawHttpClient, eventually } from '../test/support/raw-http.ts'

const phaseSeconds = Number(process.argv[2] ?? 20)
const dir = mkdtempSync(join(tmpdir(), 'wal-growth-'))
const app = createApp({ config: configWith({ dataDir: dir, port: 0, exportStallTimeoutMs: 3_600_000, rateLimitPerMinute: 1000 }), logger: memoryLogger('silent') })
const server = app.listen(0)
const base = `http://127.0.0.1:${server.port}`
const org = createOrganisationWithTenant(app.store, { name: 'WAL', slug: 'wal', plan: 'paid', apiEnabled: true, now: Date.now() })
const { token } = app.store.createToken({ organisationId: org.id, name: 'bench', createdAt: new Date().toISOString() })
const file = tenantFilePath(dir, org.id)
const writer = new Database(file)
writer.exec('PRAGMA busy_timeout = 5000')
writeStructure(writer)
writeBulkTickets(writer, { count: 100_000 }) // about 12 MB of CSV: the exports stay paused mid-file
writer.exec('PRAGMA wal_checkpoint(TRUNCATE)')

const walMb = () => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0
let written = 0
const insert = writer.prepare(
  `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, customer_name, notes, party_size, bearer_hash)
   VALUES (?, 1, 'q_pay', 'loc_a', 'WAITING', ?, 'name', ?, 1, 'hash')`,
)
/** One transaction of 50 rows of about 400 bytes every 10 ms. */
const writing = setInterval(() => {
  writer.transaction(() => {
    for (let i = 0; i < 50; i++) insert.run(`w${String(++written).padStart(9, '0')}`, new Date(Date.parse('2026-03-01') + written * 1000).toISOString(), 'x'.repeat(300))
  })()
}, 10)

async function phase(name: string): Promise<void> {
  const start = walMb()
  const rowsBefore = written
  let peak = start
  for (let s = 0; s < phaseSeconds; s++) {
    await Bun.sleep(1000)
    peak = Math.max(peak, walMb())
  }
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`
  console.log(`${name.padEnd(34)} WAL ${mb(start)} -> ${mb(walMb())} (peak ${mb(peak)}), ${Math.round((written - rowsBefore) / phaseSeconds)} rows/s written`)
}

console.log(`${phaseSeconds} s per phase; the writer commits 50 rows every 10 ms`)
await phase('no export')
const path = '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31'
const readers = [await RawHttpClient.get(base, path, { Authorization: `Bearer ${token}` }, { paused: true }), await RawHttpClient.get(base, path, { Authorization: `Bearer ${token}` }, { paused: true })]
await eventually(() => app.pool.stats().leased === 2, 5000, 'two exports')
await phase('two exports held')
for (const reader of readers) reader.destroy()
await eventually(() => app.pool.stats().leased === 0, 5000, 'the exports to end')
await phase('after the exports ended')
writer.exec('PRAGMA wal_checkpoint(TRUNCATE)')
await phase('after one wal_checkpoint(TRUNCATE)')
clearInterval(writing)
writer.close()
await app.close(0)
rmSync(dir, { recursive: true, force: true })
