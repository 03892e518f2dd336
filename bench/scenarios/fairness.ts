import { cursorPaths } from '../cursors.ts'
import { duringBackToBackExports, inTurn, load, repeat, sequential } from '../measure.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/**
 * Pages while 1M-row exports stream back to back to a fast reader, against pages alone. Both
 * sides are measured here, in turns (each first in turn), so that `--only fairness` needs no
 * other scenario's figures and the machine's drift hits both alike.
 */
export const fairness: Scenario = {
  name: 'fairness',
  title: 'pages while 1M-row exports stream back to back, against pages alone',
  needs: ['big-tenant', 'server', 'curl'],
  async run({ big, server, report, settings, log }) {
    log('Pages while 1M exports stream to a fast reader')
    const paths = cursorPaths(big)
    const url = `${server.base}/v1/exports/tickets.csv?from=${big.range1m.from}&to=${big.range1m.to}`
    const token = big.bigTokens[0]!
    const clients = [
      { name: '1 sequential client', measure: () => sequential(server.base, paths.ours, token, settings.loadSeconds) },
      { name: '32 conn.', measure: () => load(server.base, paths.ours, [token], 32, settings.loadSeconds) },
    ]
    for (const { name, measure } of clients) {
      const runs = await repeat(settings.runs, (i) => inTurn(i, measure, () => duringBackToBackExports(url, big.bigTokens[2]!, measure)))
      const alone = (key: 'rps' | 'p99') => ({ name: 'pages alone', value: summarise(runs.map(([aloneRun]) => aloneRun[key])) })
      const loaded = (key: 'rps' | 'p99') => summarise(runs.map(([, loadedRun]) => loadedRun[key]))
      report.record({ figure: `pages (${name}) during back-to-back 1M exports: req/s`, value: loaded('rps'), unit: 'req/s', baseline: alone('rps'), target: { of: 'ratio', is: '>=', bound: 0.5 } })
      report.record({ figure: `pages (${name}) during back-to-back 1M exports: p99`, value: loaded('p99'), unit: 'ms', baseline: alone('p99'), target: { of: 'value', is: '<=', bound: 10 } })
    }
  },
}
