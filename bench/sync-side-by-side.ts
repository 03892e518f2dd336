/**
 * `node_modules/.bin/bun bench/sync-side-by-side.ts [tickets]` (default 300,000): `sync`'s first
 * run into a new DuckDB file and a new PostgreSQL schema against `curl --compressed` of the same
 * export, alternating, 3 pairs each; prints the medians, the ratios and the machine's load.
 * Small enough for a shared machine (docs/performance.md#latest-results). Needs curl and
 * PostgreSQL (scripts/install-postgresql.sh).
 */
import { join } from 'node:path'
import { loadavg, cpus } from 'node:os'
import { curlExport } from './measure.ts'
import { startPostgres } from '../test/support/postgres-server.ts'
import { tempDataDir } from '../test/support/harness.ts'
import { tenantServer } from '../test/support/sync-target-suite.ts'
import { openTenant } from '../test/support/harness.ts'
import { writeBulkTickets } from '../test/support/fixtures.ts'

const tickets = Number(process.argv[2] ?? 300_000)
const DAY = 86_400_000
const now = Date.now()
const since = new Date(Math.floor((now - 80 * DAY) / DAY) * DAY).toISOString()
const temp = tempDataDir()
const tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
const db = openTenant(tenant.server.dataDir, tenant.orgId)
db.exec('DELETE FROM tickets')
writeBulkTickets(db, { count: tickets, idPrefix: 'b', start: since, everySeconds: Math.floor((80 * 86_400) / tickets) })
db.close()
const postgres = await startPostgres()
const pgUrl = await postgres.createDatabase('bench')
const exportUrl = `${tenant.server.base}/v1/exports/tickets.csv?from=${since}&to=${new Date(now + DAY).toISOString()}`

async function syncOnce(into: string[]): Promise<number> {
  const started = performance.now()
  const child = Bun.spawn([process.execPath, 'src/sync/cli.ts', '--url', tenant.server.base, '--into', ...into, '--since', since, '--quiet'], { env: { ...process.env, API_TOKEN: tenant.token } })
  if ((await child.exited) !== 0) throw new Error(`sync failed: ${into.join(' ')}`)
  return (performance.now() - started) / 1000
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

await curlExport(exportUrl, tenant.token, { gzip: true }) // warm-up
const results: Record<string, { sync: number[]; curl: number[] }> = { DuckDB: { sync: [], curl: [] }, PostgreSQL: { sync: [], curl: [] } }
const loads: number[] = []
for (let pair = 0; pair < 3; pair++) {
  for (const engine of ['DuckDB', 'PostgreSQL'] as const) {
    const into = engine === 'DuckDB' ? [join(temp.dir, `side-${pair}.duckdb`)] : [pgUrl, '--schema', `side_${pair}`]
    // Which side goes first alternates: the machine's speed drifts.
    const order = pair % 2 === 0 ? ['sync', 'curl'] : ['curl', 'sync']
    for (const side of order) {
      loads.push(loadavg()[0]!)
      results[engine]![side as 'sync' | 'curl'].push(side === 'sync' ? await syncOnce(into) : (await curlExport(exportUrl, tenant.token, { gzip: true })).total)
    }
  }
}
console.log(`${tickets} tickets, ${cpus().length} cores, 1-minute load average ${median(loads).toFixed(1)} (min ${Math.min(...loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)})`)
for (const [engine, { sync, curl }] of Object.entries(results)) {
  console.log(`${engine}: sync ${median(sync).toFixed(2)} s (${Math.round(tickets / median(sync))} rows/s), curl --compressed ${median(curl).toFixed(2)} s (${Math.round(tickets / median(curl))} rows/s), ratio ${(median(sync) / median(curl)).toFixed(2)}×`)
}
await tenant.server.close()
await postgres.stop()
temp.cleanup()
