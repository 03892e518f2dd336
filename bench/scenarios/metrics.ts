import { readFileSync } from 'node:fs'
import { cursorPaths } from '../cursors.ts'
import { inTurn, load, withServerCpu, type LoadResult } from '../measure.ts'
import type { ServerHandle } from '../processes.ts'
import type { Scenario } from '../scenario.ts'

/**
 * What the metrics cost (docs/operations.md#metrics): JSON pages of 500 rows at 32 connections
 * against two processes of the service on the same data, one with METRICS_PORT set and one
 * without, in back-to-back pairs (which goes first alternating), as `pages` compares with the
 * framework-free server. The metered one is scraped after each of its runs, as Prometheus would
 * between them, and must have counted that run's requests.
 */
export const metrics: Scenario = {
  name: 'metrics',
  title: 'pages at 32 connections with the metrics on against off, in pairs',
  needs: ['big-tenant'],
  async run({ big, report, settings, log, startService }) {
    log('The metrics: pages with METRICS_PORT set against unset')
    const on = await startService({ METRICS_PORT: '0' }, 'bench-metrics-on')
    const off = await startService({}, 'bench-metrics-off')
    try {
      const metricsUrl = /"event":"metrics_listening","url":"([^"]+)"/.exec(readFileSync(on.logPath, 'utf8'))?.[1]
      if (!metricsUrl) throw new Error('the metered service did not log its metrics URL')
      const token = big.bigTokens[0]!
      const paths = cursorPaths(big).ours
      const measure = (target: ServerHandle) => withServerCpu(target.pids, () => load(target.base, paths, [token], 32, settings.pairSeconds))
      let counted = 0
      const scrapedPages = async () => {
        const text = await (await fetch(metricsUrl)).text()
        return Number(/^queue_api_requests_total\{operation="tickets",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0)
      }
      const measureOn = async () => {
        const result = await measure(on)
        const now = await scrapedPages()
        if (now - counted < result.statuses['2xx']) throw new Error(`the metrics counted ${now - counted} pages of a run that got ${result.statuses['2xx']}`)
        counted = now
        return result
      }
      await measureOn() // warm-up of both
      await measure(off)
      const withMetrics: (LoadResult & { cpuPerRequest: number })[] = []
      const without: typeof withMetrics = []
      for (let i = 0; i < settings.pairs; i++) {
        const [a, b] = await inTurn(i, measureOn, () => measure(off))
        withMetrics.push(a)
        without.push(b)
      }
      report.recordPairs('pages, 32 connections, metrics on: req/s', withMetrics, without, 'metrics off', (run) => run.rps, 'req/s', { of: 'ratio', is: '>=', bound: 0.95 })
      report.recordPairs('pages, 32 connections, metrics on: server CPU per request', withMetrics, without, 'metrics off', (run) => run.cpuPerRequest, 'µs')
    } finally {
      await Promise.all([on.stop(), off.stop()])
    }
  },
}
