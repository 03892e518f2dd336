/**
 * `bun bench/changes.ts [--quick]`: what change tracking costs (docs/api.md#loading-incrementally).
 *
 * 1. The writer: the administration application's bulk insert of 100,000 tickets (one
 *    transaction) and 100,000 status updates (by id, 1,000 to a transaction), on a file at schema
 *    version 2 (no triggers) and at version 3 (the change log's triggers), in alternating order.
 * 2. The reader: on the benchmark's 1M-ticket tenant (bench/data.ts; a copy, migrated to version
 *    3) with 1,000 tickets changed after a token, a changedAfter page (first and last) against an
 *    unfiltered page of the same range, sequential requests over one kept-alive connection to the
 *    real server in its own process; and the changedAfter export of those 1,000 rows against the
 *    same export without changedAfter (curl, the whole body read).
 * Prints a Markdown table: medians of several runs, min–max in brackets, and the machine.
 */
import { Database } from 'bun:sqlite'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { buildData, bigTenantFile } from './data.ts'
import { ROOT, startServer } from './processes.ts'
import { describeMachine } from './machine.ts'
import { summarise, type Summary } from './stats.ts'
import { openWritableDatabase } from '../src/db/files.ts'
import { migrate } from '../src/db/migrator.ts'
import { TENANT_MIGRATIONS } from '../src/tenant/migrations.ts'
import { openTenantForWriting } from '../src/tenant/files.ts'
import { tenantDirectory } from '../src/tenant/paths.ts'
import { Random } from '../src/seed/random.ts'

const QUICK = process.argv.includes('--quick')
const WRITER_ROUNDS = QUICK ? 2 : 5
const PAGE_ROUNDS = QUICK ? 3 : 9
const REQUESTS_PER_ROUND = QUICK ? 50 : 200
const EXPORT_RUNS = QUICK ? 3 : 5
const TICKETS = 100_000
const CHANGED = 1_000
const log = (line: string) => process.stderr.write(line + '\n')

interface Figure {
  figure: string
  value: Summary
  unit: string
  against?: { name: string; value: Summary }
  target?: string
}
const figures: Figure[] = []
const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2))
const show = (s: Summary, unit: string) => `${fmt(s.median)} ${unit} (${fmt(s.min)}–${fmt(s.max)})`
/** value / against, of medians; a small one as a fraction (the export's is about 1/400). */
function ratioOf(figure: Figure): string {
  const ratio = figure.value.median / figure.against!.value.median
  return `${ratio >= 0.1 ? `${ratio.toFixed(2)}×` : `1/${Math.round(1 / ratio)} of`} ${figure.against!.name}`
}
function record(figure: Figure) {
  figures.push(figure)
  const ratio = figure.against ? ` = ${ratioOf(figure)}` : ''
  log(`  ${figure.figure}: ${show(figure.value, figure.unit)}${ratio}`)
}

// ---- 1. the writer ----------------------------------------------------------------------------

/** A fresh tenant file at `version` with the standard structure, in a directory of its own. */
function freshTenant(version: 2 | 3): { db: Database; path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-changes-'))
  mkdirSync(tenantDirectory(dir), { recursive: true })
  const path = join(tenantDirectory(dir), 'org_bench.sqlite')
  const db = openWritableDatabase(path, 5000)
  migrate(db, TENANT_MIGRATIONS.slice(0, version))
  db.exec(`
    INSERT INTO locations VALUES ('loc_a', 'A', 'a'), ('loc_b', 'B', 'b');
    INSERT INTO queues VALUES ('q_1', 'loc_a', 'One', 'one', 'ACTIVE'), ('q_2', 'loc_a', 'Two', 'two', 'ACTIVE'), ('q_3', 'loc_b', 'Three', 'three', 'ACTIVE');
  `)
  return { db, path, cleanup: () => { db.close(); rmSync(dir, { recursive: true, force: true }) } }
}

/** As the administration application writes: one prepared INSERT per ticket, personal columns filled. */
function bulkInsert(db: Database): number {
  const insert = db.prepare(
    `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, customer_name, notes, party_size, bearer_hash)
     VALUES (?, ?, ?, ?, 'WAITING', ?, 'A Customer', 'a note', 2, 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1')`,
  )
  const start = Date.parse('2026-03-01T07:00:00.000Z')
  const started = performance.now()
  db.transaction(() => {
    for (let i = 0; i < TICKETS; i++) {
      const queue = i % 3
      insert.run(`tkt_${String(i).padStart(8, '0')}`, i, `q_${queue + 1}`, queue === 2 ? 'loc_b' : 'loc_a', new Date(start + i * 7_000).toISOString())
    }
  })()
  return (performance.now() - started) / 1000
}

/** Every ticket called, by id, in transactions of 1,000 (a desk's day in a busy office, replayed). */
function statusUpdates(db: Database): number {
  const update = db.prepare(`UPDATE tickets SET status = 'CALLED', called_at = ?, called_by_device_session_id = NULL WHERE id = ?`)
  const calledAt = '2026-03-20T10:00:00.000Z'
  const started = performance.now()
  for (let first = 0; first < TICKETS; first += 1000) {
    db.transaction(() => {
      for (let i = first; i < first + 1000; i++) update.run(calledAt, `tkt_${String(i).padStart(8, '0')}`)
    })()
  }
  return (performance.now() - started) / 1000
}

function writerCost() {
  log(`The writer: ${TICKETS.toLocaleString('en')} inserts, then ${TICKETS.toLocaleString('en')} status updates, ${WRITER_ROUNDS} rounds`)
  const runs = { 2: { insert: [] as number[], update: [] as number[], bytes: [] as number[] }, 3: { insert: [] as number[], update: [] as number[], bytes: [] as number[] } }
  for (let round = 0; round < WRITER_ROUNDS; round++) {
    // Alternate which goes first: this machine's speed drifts over minutes.
    for (const version of round % 2 === 0 ? ([2, 3] as const) : ([3, 2] as const)) {
      const tenant = freshTenant(version)
      try {
        runs[version].insert.push(bulkInsert(tenant.db))
        runs[version].update.push(statusUpdates(tenant.db))
        tenant.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
        runs[version].bytes.push(statSync(tenant.path).size)
      } finally {
        tenant.cleanup()
      }
    }
  }
  const perRow = (seconds: number[]) => summarise(seconds.map((s) => (s / TICKETS) * 1e6))
  record({ figure: 'bulk insert, no triggers (version 2)', value: perRow(runs[2].insert), unit: 'µs/ticket' })
  record({ figure: 'bulk insert, change log triggers (version 3)', value: perRow(runs[3].insert), unit: 'µs/ticket', against: { name: 'no triggers', value: perRow(runs[2].insert) } })
  record({ figure: 'status updates, no triggers (version 2)', value: perRow(runs[2].update), unit: 'µs/update' })
  record({ figure: 'status updates, change log triggers (version 3)', value: perRow(runs[3].update), unit: 'µs/update', against: { name: 'no triggers', value: perRow(runs[2].update) } })
  const mib = (bytes: number[]) => summarise(bytes.map((b) => b / 2 ** 20))
  record({ figure: `file size after both, ${TICKETS.toLocaleString('en')} tickets, version 2`, value: mib(runs[2].bytes), unit: 'MiB' })
  record({ figure: `file size after both, ${TICKETS.toLocaleString('en')} tickets, version 3`, value: mib(runs[3].bytes), unit: 'MiB', against: { name: 'version 2', value: mib(runs[2].bytes) } })
}

// ---- 2. the reader ----------------------------------------------------------------------------

/** Median latency of `count` sequential requests of `path`, over one kept-alive connection. */
async function latency(base: string, path: string, token: string, count: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    const response = await fetch(base + path, { headers: { Authorization: `Bearer ${token}` } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`)
    times.push(performance.now() - started)
  }
  return summarise(times).median
}

async function curlSeconds(url: string, token: string): Promise<{ seconds: number; bytes: number }> {
  const proc = Bun.spawn(['curl', '-s', '-o', '/dev/null', '-w', '%{time_total} %{size_download} %{http_code}', '-H', `Authorization: Bearer ${token}`, url], { stdout: 'pipe' })
  const [seconds, bytes, status] = (await new Response(proc.stdout).text()).split(' ').map(Number) as [number, number, number]
  if (status !== 200) throw new Error(`export answered ${status}`)
  return { seconds, bytes }
}

async function readerCost() {
  log('The reader: the 1M-ticket tenant (bench/data.ts), 1,000 tickets changed after a token')
  const data = buildData(join(ROOT, 'bench', '.data'), log)
  // A copy of its own: the changes below must not alter the shared benchmark data.
  const dataDir = join(ROOT, 'bench', '.data', 'changes')
  rmSync(dataDir, { recursive: true, force: true })
  mkdirSync(tenantDirectory(dataDir), { recursive: true })
  copyFileSync(join(data.dataDir, 'control.sqlite'), join(dataDir, 'control.sqlite'))
  copyFileSync(bigTenantFile(data), join(tenantDirectory(dataDir), `${data.bigOrgId}.sqlite`))
  const migrating = performance.now()
  openTenantForWriting(dataDir, data.bigOrgId).close() // `admin migrate`: to version 3
  log(`  migrated the copy to version 3 in ${((performance.now() - migrating) / 1000).toFixed(2)} s`)

  const server = await startServer(dataDir, { RATE_LIMIT_PER_MINUTE: '1000000' }, 'changes-server')
  const apiToken = data.bigTokens[0]!
  try {
    const range = `from=${data.range1m.from}&to=${data.range1m.to}`
    const first = await fetch(`${server.base}/v1/tickets?${range}&limit=1`, { headers: { Authorization: `Bearer ${apiToken}` } })
    const changesToken = first.headers.get('x-changes-token')
    await first.arrayBuffer()
    if (!changesToken) throw new Error('no X-Changes-Token: is the copy at schema version 3?')

    // The administration application changes 1,000 tickets spread over the 90 days.
    const writer = new Database(join(tenantDirectory(dataDir), `${data.bigOrgId}.sqlite`))
    writer.exec('PRAGMA busy_timeout = 5000')
    const ids = (writer.query('SELECT id FROM tickets').all() as { id: string }[]).map((row) => row.id)
    const random = new Random('bench-changes')
    const chosen = new Set<string>()
    while (chosen.size < CHANGED) chosen.add(random.pick(ids))
    const update = writer.prepare(`UPDATE tickets SET status = 'CANCELED', cancelled_at = '2026-06-30T17:00:00.000Z' WHERE id = ?`)
    writer.transaction(() => {
      for (const id of chosen) update.run(id)
    })()
    writer.close()

    const changed = `${range}&changedAfter=${encodeURIComponent(changesToken)}`
    const firstPage = await (await fetch(`${server.base}/v1/tickets?${changed}&limit=500`, { headers: { Authorization: `Bearer ${apiToken}` } })).json() as { items: unknown[]; nextCursor: string }
    if (firstPage.items.length !== 500 || !firstPage.nextCursor) throw new Error('expected 1,000 changed tickets in two pages')
    const paths = {
      unfiltered: `/v1/tickets?${range}&limit=500`,
      changedFirst: `/v1/tickets?${changed}&limit=500`,
      changedLast: `/v1/tickets?${changed}&limit=500&cursor=${encodeURIComponent(firstPage.nextCursor)}`,
    }
    log(`  pages of 500 rows: ${PAGE_ROUNDS} rounds of ${REQUESTS_PER_ROUND} sequential requests each, in rotating order`)
    for (const path of Object.values(paths)) await latency(server.base, path, apiToken, 20) // warm-up
    const rounds = { unfiltered: [] as number[], changedFirst: [] as number[], changedLast: [] as number[] }
    const names = Object.keys(paths) as (keyof typeof paths)[]
    for (let round = 0; round < PAGE_ROUNDS; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(round + i) % names.length]!
        rounds[name].push(await latency(server.base, paths[name], apiToken, REQUESTS_PER_ROUND))
      }
    }
    const unfiltered = { name: 'an unfiltered page', value: summarise(rounds.unfiltered) }
    record({ figure: 'unfiltered page of 500 (first of 1M), p50', value: unfiltered.value, unit: 'ms' })
    record({ figure: 'changedAfter page of 500, first of 2, p50', value: summarise(rounds.changedFirst), unit: 'ms', against: unfiltered, target: '≤ 2×' })
    record({ figure: 'changedAfter page of 500, last of 2, p50', value: summarise(rounds.changedLast), unit: 'ms', against: unfiltered, target: '≤ 2×' })

    log(`  exports: ${EXPORT_RUNS} runs each, alternating`)
    const exports = { changed: [] as number[], whole: [] as number[] }
    let sizes = { changed: 0, whole: 0 }
    for (let run = 0; run < EXPORT_RUNS; run++) {
      for (const name of run % 2 === 0 ? (['changed', 'whole'] as const) : (['whole', 'changed'] as const)) {
        const result = await curlSeconds(`${server.base}/v1/exports/tickets.csv?${name === 'changed' ? changed : range}`, apiToken)
        exports[name].push(result.seconds * 1000)
        sizes[name] = result.bytes
      }
    }
    const whole = { name: 'the same export without changedAfter', value: summarise(exports.whole) }
    record({ figure: `export without changedAfter (${data.bigTickets.toLocaleString('en')} rows, ${(sizes.whole / 2 ** 20).toFixed(0)} MiB)`, value: whole.value, unit: 'ms' })
    record({ figure: `changedAfter export (${CHANGED.toLocaleString('en')} rows, ${(sizes.changed / 1024).toFixed(0)} KiB)`, value: summarise(exports.changed), unit: 'ms', against: whole })
  } finally {
    await server.stop()
  }
}

// ---- report -----------------------------------------------------------------------------------

const startedAt = performance.now()
writerCost()
await readerCost()
const lines = [
  `# Change tracking: bench/changes.ts${QUICK ? ' --quick' : ''}, ${new Date().toISOString().slice(0, 10)}, ${((performance.now() - startedAt) / 1000).toFixed(0)} s`,
  '',
  '| figure | median (min–max) | ratio | target |',
  '|---|---|---|---|',
  ...figures.map((f) => {
    const ratio = f.against ? ratioOf(f) : ''
    const met = f.target && f.against ? ` (${f.value.median / f.against.value.median <= Number(f.target.replace(/[^0-9.]/g, '')) ? 'met' : 'missed'})` : ''
    return `| ${f.figure} | ${show(f.value, f.unit)} | ${ratio} | ${f.target ?? ''}${met} |`
  }),
  '',
  'Machine: ' + Object.entries(describeMachine()).map(([k, v]) => `${k} ${v}`).join('; '),
]
console.log(lines.join('\n'))
process.exit(0)
