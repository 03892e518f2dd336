import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { curlExport, repeat } from '../measure.ts'
import { CLIENT_CORE, ROOT, rssOf, track } from '../processes.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/** One first run of `sync` into a new DuckDB file: wall time, rows loaded, and the sync process's peak RSS. */
async function syncOnce(base: string, token: string, since: string, file: string): Promise<{ seconds: number; rows: number; peakRss: number }> {
  rmSync(file, { force: true })
  rmSync(`${file}.wal`, { force: true })
  const started = performance.now()
  const child = track(
    Bun.spawn([...CLIENT_CORE, process.execPath, 'src/sync/cli.ts', '--url', base, '--into', file, '--since', since, '--json'], {
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
  const summary = JSON.parse(out) as { tickets: { inserted: number; updated: number } }
  rmSync(file, { force: true })
  return { seconds: (performance.now() - started) / 1000, rows: summary.tickets.inserted + summary.tickets.updated, peakRss }
}

/**
 * `sync`'s first run of the 1M-row tenant into DuckDB against the bare CSV export of the same
 * rows (curl), alternating; and its peak RSS for about 100k rows against 1M, to show whether
 * memory follows the row count.
 */
export const sync: Scenario = {
  name: 'sync',
  title: 'sync of the 1M-row tenant into DuckDB against the bare CSV export; its peak RSS at 100k and 1M rows',
  needs: ['big-tenant', 'server', 'curl'],
  async run({ big, server, report, settings, log }) {
    log('sync into DuckDB')
    const token = big.bigTokens[1]!
    const file = join(ROOT, 'bench', '.data', 'sync-bench.duckdb')
    const exportUrl = `${server.base}/v1/exports/tickets.csv?from=${big.range1m.from}&to=${big.range1m.to}`
    // About 100k rows: the last ninth of the 90 days.
    const lastDays = new Date(Date.parse(big.range1m.to) - 10 * 86_400_000).toISOString()
    await curlExport(exportUrl, token) // warm-up
    const syncs: { seconds: number; rows: number; peakRss: number }[] = []
    // The client asks for gzip, as fetch does (it saves the wire between machines; on loopback it
    // costs the server the compression): the like-for-like export is gzipped too, and the plain
    // one is shown beside it.
    const gzipped: number[] = []
    const plain: number[] = []
    for (let i = 0; i < settings.runs; i++) {
      syncs.push(await syncOnce(server.base, token, big.range1m.from, file))
      gzipped.push((await curlExport(exportUrl, token, { gzip: true })).total)
      plain.push((await curlExport(exportUrl, token)).total)
    }
    const small = await repeat(settings.runs, () => syncOnce(server.base, token, lastDays, file))
    const rows = syncs[0]!.rows
    const syncRate = summarise(syncs.map((s) => s.rows / s.seconds))
    report.record({
      figure: `sync first run of ${rows} rows: rows/s`,
      value: syncRate,
      unit: 'rows/s',
      baseline: { name: 'the same export gzipped, as the client asks (curl --compressed)', value: summarise(gzipped.map((s) => big.range1m.rows / s)) },
      target: { of: 'ratio', is: '>=', bound: 0.5 },
    })
    report.record({
      figure: `sync first run of ${rows} rows: rows/s, against the export without gzip`,
      value: syncRate,
      unit: 'rows/s',
      baseline: { name: 'bare CSV export (curl)', value: summarise(plain.map((s) => big.range1m.rows / s)) },
    })
    const smallRss = summarise(small.map((s) => s.peakRss / 2 ** 20))
    report.record({
      figure: `sync peak RSS, ${rows} rows`,
      value: summarise(syncs.map((s) => s.peakRss / 2 ** 20)),
      unit: 'MB',
      baseline: { name: `sync of ${small[0]!.rows} rows`, value: smallRss },
    })
  },
}
