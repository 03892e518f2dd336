import { bigTenantFile } from '../data.ts'
import { curlExport, sqliteCli } from '../measure.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/** Exports of 100k and 1M rows read by curl, against the sqlite3 CLI and the framework-free server, interleaved. */
export const csv: Scenario = {
  name: 'csv',
  title: 'CSV export of 100k and 1M rows against the sqlite3 CLI and a framework-free export',
  needs: ['big-tenant', 'server', 'baseline', 'sqlite3', 'curl'],
  async run({ big, server, baseline, report, settings, log }) {
    log('CSV export')
    const token = big.bigTokens[0]!
    const file = bigTenantFile(big)
    for (const [label, range] of [['100k', big.range100k], ['1M', big.range1m]] as const) {
      const query = `from=${range.from}&to=${range.to}`
      const ourUrl = `${server.base}/v1/exports/tickets.csv?${query}`
      const frameworkFreeUrl = `${baseline.base}/export?${query}`
      // Warm-up (page cache, JIT); then the three are interleaved, so drift of this machine hits them alike.
      await curlExport(ourUrl, token)
      await curlExport(frameworkFreeUrl, token)
      await sqliteCli(file, range.from, range.to)
      const ours: Awaited<ReturnType<typeof curlExport>>[] = []
      const frameworkFree: number[] = []
      const cli: number[] = []
      for (let i = 0; i < settings.runs + 2; i++) {
        ours.push(await curlExport(ourUrl, token))
        frameworkFree.push((await curlExport(frameworkFreeUrl, token)).total)
        cli.push(await sqliteCli(file, range.from, range.to))
      }
      const cliSummary = summarise(cli)
      report.record({ figure: `CSV ${label} rows (${range.rows}): wall time to last byte`, value: summarise(ours.map((r) => r.total)), unit: 's', baseline: { name: 'sqlite3 -csv CLI', value: cliSummary }, target: { of: 'ratio', is: '<=', bound: 1.3 } })
      report.record({ figure: `CSV ${label}: framework-free Bun.serve export (same query and formatter, direct stream)`, value: summarise(frameworkFree), unit: 's', baseline: { name: 'sqlite3 -csv CLI', value: cliSummary } })
      report.record({ figure: `CSV ${label}: rows/s`, value: summarise(ours.map((r) => range.rows / r.total)), unit: 'rows/s', baseline: { name: 'sqlite3 -csv CLI', value: summarise(cli.map((s) => range.rows / s)) } })
      report.record({ figure: `CSV ${label}: time to first byte`, value: summarise(ours.map((r) => r.ttfb * 1000)), unit: 'ms', target: { of: 'value', is: '<=', bound: 10 } })
    }
  },
}
