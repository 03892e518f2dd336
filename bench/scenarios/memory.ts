import { curlExport, peakRss, repeat } from '../measure.ts'
import { rssOf } from '../processes.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/** The server's resident memory while one and four 1M-row exports stream. */
export const memory: Scenario = {
  name: 'memory',
  title: "the server's memory during one and four concurrent 1M-row exports",
  needs: ['big-tenant', 'server', 'curl'],
  async run({ big, server, report, settings, log }) {
    log('Export memory')
    const token = big.bigTokens[0]!
    const url = `${server.base}/v1/exports/tickets.csv?from=${big.range1m.from}&to=${big.range1m.to}`
    Bun.gc(true)
    await Bun.sleep(500)
    const idle = rssOf(server.pid)
    const one = await repeat(settings.runs, async () => (await peakRss(server.pid, () => curlExport(url, token))).peak - idle)
    const four = await repeat(settings.runs, async () => (await peakRss(server.pid, () => Promise.all([0, 1, 2, 3].map((i) => curlExport(url, big.bigTokens[i]!))))).peak - idle)
    const idleMb = { median: idle / 2 ** 20, min: idle / 2 ** 20, max: idle / 2 ** 20, runs: 1 }
    report.record({ figure: 'server idle RSS', value: idleMb, unit: 'MB' })
    report.record({ figure: 'RSS over idle during one 1M export (peak)', value: summarise(one.map((b) => b / 2 ** 20)), unit: 'MB', baseline: { name: 'idle RSS', value: idleMb }, target: { of: 'value', is: '<=', bound: 64 } })
    report.record({ figure: 'RSS over idle during 4 concurrent 1M exports (peak)', value: summarise(four.map((b) => b / 2 ** 20)), unit: 'MB', baseline: { name: 'idle RSS', value: idleMb }, target: { of: 'value', is: '<=', bound: 128 } })
  },
}
