import { cursorPaths } from '../cursors.ts'
import { duringBackToBackExports, repeat, sequential, type LoadResult } from '../measure.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/**
 * The mechanism behind fairness, measured on the framework-free server: one sequential client's
 * pages while 1M exports stream back to back, the export yielding once per chunk (as the
 * service does) or only when the socket pushes back.
 */
export const yieldMechanism: Scenario = {
  name: 'yield',
  title: 'the fairness mechanism on the framework-free server: yield per chunk or only on backpressure',
  needs: ['big-tenant', 'baseline', 'curl'],
  async run({ big, baseline, report, settings, log }) {
    log('Export fairness mechanism: yield per chunk vs none (framework-free server)')
    const paths = cursorPaths(big).baseline
    const pages = () => sequential(baseline.base, paths, 'unused', settings.loadSeconds)
    const pagesDuringExports = (yieldFlag: '0' | '1') =>
      duringBackToBackExports(`${baseline.base}/export?from=${big.range1m.from}&to=${big.range1m.to}&yield=${yieldFlag}`, 'unused', pages)
    const alone = await repeat(settings.runs, pages)
    const yielding = await repeat(settings.runs, () => pagesDuringExports('1'))
    const greedy = await repeat(settings.runs, () => pagesDuringExports('0'))
    const s = (list: LoadResult[], key: 'rps' | 'p99') => summarise(list.map((r) => r[key]))
    report.record({ figure: 'mechanism: pages (1 client) during exports that yield per chunk: req/s', value: s(yielding, 'rps'), unit: 'req/s', baseline: { name: 'pages alone', value: s(alone, 'rps') } })
    report.record({ figure: 'mechanism: pages during exports that yield per chunk: p99', value: s(yielding, 'p99'), unit: 'ms', baseline: { name: 'pages alone', value: s(alone, 'p99') } })
    report.record({ figure: 'mechanism: pages (1 client) during exports that yield only on backpressure: req/s', value: s(greedy, 'rps'), unit: 'req/s', baseline: { name: 'pages alone', value: s(alone, 'rps') } })
    report.record({ figure: 'mechanism: pages during exports that yield only on backpressure: p99', value: s(greedy, 'p99'), unit: 'ms', baseline: { name: 'pages alone', value: s(alone, 'p99') } })
  },
}
