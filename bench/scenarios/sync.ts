import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { curlExport } from '../measure.ts'
import { CLIENT_CORE, ROOT, rssOf, track } from '../processes.ts'
import { summarise } from '../stats.ts'
import { prepareHugeTenant } from '../sync-data.ts'
import { postgresAvailable, startPostgres } from '../../test/support/postgres-server.ts'
import type { Scenario } from '../scenario.ts'
import { columnList } from '../../src/sync/ticket-columns.ts'
import { timeDuckDbMedianWait, timePostgresMedianWait, type QueryTimes } from '../ticket-details-query.ts'

interface SyncRun {
  seconds: number
  /** Rows the run wrote or checked: its summary's inserted + updated + deleted, or the range's rows for a --reconcile. */
  rows: number
  peakRss: number
}

/** One run of `sync` as its own process (on the client's core): wall time, rows, and the process's peak RSS. */
async function syncOnce(base: string, token: string, args: string[]): Promise<SyncRun> {
  const started = performance.now()
  const child = track(
    Bun.spawn([...CLIENT_CORE, process.execPath, 'src/sync/cli.ts', '--url', base, ...args, '--json'], {
      cwd: ROOT,
      env: { ...process.env, API_TOKEN: token },
      stdout: 'pipe',
      stderr: 'inherit',
    }),
  )
  let peakRss = 0
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, rssOf(child.pid))
    } catch {
      // the process has just exited
    }
  }, 10)
  const out = await new Response(child.stdout).text()
  const status = await child.exited
  clearInterval(sampler)
  if (status !== 0) throw new Error(`sync exited ${status}`)
  const { tickets } = JSON.parse(out) as { tickets: { inserted: number; updated: number; deleted: number } }
  return { seconds: (performance.now() - started) / 1000, rows: tickets.inserted + tickets.updated + tickets.deleted, peakRss }
}

/** The median wait per queue through ticket_details, against the same query over the tables. */
function recordMedianWait(report: Parameters<Scenario['run']>[0]['report'], engine: string, rows: number, times: QueryTimes): void {
  report.record({
    figure: `ticket_details median wait per queue, ${rows} tickets in ${engine}: ms`,
    value: summarise(times.view.map((s) => s * 1000)),
    unit: 'ms',
    baseline: { name: 'the same query written over the tables', value: summarise(times.tables.map((s) => s * 1000)) },
  })
}

function removeDuckDb(file: string): void {
  for (const path of [file, `${file}.wal`, `${file}.tmp`]) rmSync(path, { recursive: true, force: true })
}

const MB = 2 ** 20

/**
 * `sync` at the sizes a data team has: a first run of the 3M-ticket tenant into DuckDB (rows/s
 * against the same export gzipped, as the client asks for it; the sync process's peak RSS, whose
 * target is a bound whatever the row count), a first run of the 1M tenant into PostgreSQL against
 * `psql \copy` of the same CSV into the same table (the floor of any COPY-based loader), and a
 * --reconcile of 1M tickets against a first run of the same range, on both targets; and on the
 * reconciled 1M mirror of each, the median wait per queue through ticket_details against the
 * same query written over the tables.
 */
export const sync: Scenario = {
  name: 'sync',
  title: 'sync: 3M tickets into DuckDB against the gzipped export, peak RSS; 1M into PostgreSQL against psql \\copy; --reconcile of 1M against a first run; the ticket_details median wait on 1M',
  needs: ['big-tenant', 'server', 'curl'],
  async run({ big, server, report, settings, log }) {
    const huge = prepareHugeTenant(big, log)
    const scratch = join(ROOT, 'bench', '.data')
    const duckFile = join(scratch, 'sync-bench.duckdb')

    log(`sync of ${huge.tickets} tickets into DuckDB`)
    const hugeExport = `${server.base}/v1/exports/tickets.csv?from=${huge.range.from}&to=${huge.range.to}`
    await curlExport(hugeExport, huge.token, { gzip: true }) // warm-up
    const hugeSyncs: SyncRun[] = []
    const hugeGzipped: number[] = []
    for (let i = 0; i < settings.runs; i++) {
      removeDuckDb(duckFile)
      hugeSyncs.push(await syncOnce(server.base, huge.token, ['--into', duckFile, '--since', huge.range.from]))
      hugeGzipped.push((await curlExport(hugeExport, huge.token, { gzip: true })).total)
    }
    removeDuckDb(duckFile)
    report.record({
      figure: `sync first run of ${hugeSyncs[0]!.rows} tickets into DuckDB: rows/s`,
      value: summarise(hugeSyncs.map((s) => s.rows / s.seconds)),
      unit: 'rows/s',
      baseline: { name: 'the same export gzipped, as the client asks (curl --compressed)', value: summarise(hugeGzipped.map((s) => huge.tickets / s)) },
      target: { of: 'ratio', is: '>=', bound: 0.5 },
    })
    report.record({
      figure: `sync peak RSS, ${hugeSyncs[0]!.rows} tickets into DuckDB`,
      value: summarise(hugeSyncs.map((s) => s.peakRss / MB)),
      unit: 'MB',
      target: { of: 'value', is: '<=', bound: 450 },
    })

    log('sync of 1M tickets into DuckDB, then --reconcile')
    const token = big.bigTokens[1]!
    const duckFirst: SyncRun[] = []
    const duckReconcile: SyncRun[] = []
    for (let i = 0; i < settings.runs; i++) {
      removeDuckDb(duckFile)
      duckFirst.push(await syncOnce(server.base, token, ['--into', duckFile, '--since', big.range1m.from]))
      // A reconcile reads and compares every row, and writes none here: the count is the range's.
      duckReconcile.push({ ...(await syncOnce(server.base, token, ['--into', duckFile, '--reconcile'])), rows: big.range1m.rows })
    }
    const duckQuery = await timeDuckDbMedianWait(duckFile, settings.runs)
    removeDuckDb(duckFile)
    recordMedianWait(report, 'DuckDB', big.range1m.rows, duckQuery)
    report.recordPairs(`sync --reconcile of ${big.range1m.rows} tickets in DuckDB: seconds`, duckReconcile, duckFirst, 'a first run of the same range', (r) => r.seconds, 's')
    report.record({
      figure: `sync peak RSS, ${duckFirst[0]!.rows} tickets into DuckDB`,
      value: summarise(duckFirst.map((s) => s.peakRss / MB)),
      unit: 'MB',
      baseline: { name: `the ${hugeSyncs[0]!.rows}-ticket run`, value: summarise(hugeSyncs.map((s) => s.peakRss / MB)) },
    })

    if (!postgresAvailable()) {
      log('  PostgreSQL is not installed: its figures are not measured (scripts/install-postgres.sh)')
      return
    }
    log('sync of 1M tickets into PostgreSQL against psql \\copy, then --reconcile')
    const postgres = await startPostgres()
    const csvFile = join(scratch, 'sync-bench-1m.csv')
    try {
      const url = await postgres.createDatabase('bench')
      // The export's CSV, once, for psql to load.
      const download = Bun.spawn(['curl', '-s', '-f', '-o', csvFile, '-H', `Authorization: Bearer ${token}`, `${server.base}/v1/exports/tickets.csv?from=${big.range1m.from}&to=${big.range1m.to}`])
      if ((await download.exited) !== 0) throw new Error('the export could not be downloaded for psql')
      const columns = columnList()
      const first: SyncRun[] = []
      const copies: number[] = []
      const reconciles: SyncRun[] = []
      for (let i = 0; i < settings.runs; i++) {
        postgres.psql('bench', 'DROP SCHEMA IF EXISTS bench_sync CASCADE; DROP SCHEMA IF EXISTS bench_copy CASCADE')
        first.push(await syncOnce(server.base, token, ['--into', url, '--schema', 'bench_sync', '--since', big.range1m.from]))
        reconciles.push({ ...(await syncOnce(server.base, token, ['--into', url, '--schema', 'bench_sync', '--reconcile'])), rows: big.range1m.rows })
        // The same table (columns, types, primary key), empty, loaded by psql's \copy from the file.
        postgres.psql('bench', 'CREATE SCHEMA bench_copy; CREATE TABLE bench_copy.tickets (LIKE bench_sync.tickets INCLUDING ALL)')
        const started = performance.now()
        postgres.psql('bench', `\\copy bench_copy.tickets (${columns}) FROM '${csvFile}' WITH (FORMAT csv, HEADER true)`)
        copies.push((performance.now() - started) / 1000)
      }
      report.record({
        figure: `sync first run of ${first[0]!.rows} tickets into PostgreSQL: rows/s`,
        value: summarise(first.map((s) => s.rows / s.seconds)),
        unit: 'rows/s',
        baseline: { name: 'psql \\copy of the same CSV file into the same table', value: summarise(copies.map((s) => big.range1m.rows / s)) },
        target: { of: 'ratio', is: '>=', bound: 0.5 },
      })
      report.recordPairs(`sync --reconcile of ${big.range1m.rows} tickets in PostgreSQL: seconds`, reconciles, first, 'a first run of the same range', (r) => r.seconds, 's')
      recordMedianWait(report, 'PostgreSQL', big.range1m.rows, await timePostgresMedianWait(url, 'bench_sync', settings.runs))
    } finally {
      rmSync(csvFile, { force: true })
      await postgres.stop()
    }
  },
}
