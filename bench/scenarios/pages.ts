import { cursorPaths, cursorWalk } from '../cursors.ts'
import { inTurn, load, repeat, sequential, withServerCpu, type LoadResult } from '../measure.ts'
import { summarise } from '../stats.ts'
import type { Target } from '../targets.ts'
import type { Scenario } from '../scenario.ts'

const FRAMEWORK_FREE = 'framework-free Bun.serve'

/**
 * JSON pages of the 1M-row tenant against the framework-free server in back-to-back pairs, at
 * one sequential client and 32 connections; pages of 5 rows; the last page against the first;
 * a full cursor walk against the baseline's.
 */
export const pages: Scenario = {
  name: 'pages',
  title: 'JSON pages against the framework-free server in pairs; page depth; full cursor walk',
  needs: ['big-tenant', 'server', 'baseline'],
  async run({ big, server, baseline, report, settings, log }) {
    log('JSON pages of 500 rows')
    const paths = cursorPaths(big)
    const token = big.bigTokens[0]!
    // One client: the sequential timed client (sub-millisecond resolution); 32: autocannon.
    const measure = (base: string, list: string[], connections: number, seconds: number) =>
      connections === 1 ? sequential(base, list, token, seconds) : load(base, list, [token], connections, seconds)
    const measureWithCpu = (target: { base: string; pids: number[] }, list: string[], connections: number, seconds: number) =>
      withServerCpu(target.pids, () => measure(target.base, list, connections, seconds))
    /** `pairs` back-to-back runs of each server, alternating which goes first (neither always gets the warmer machine). */
    const pairedRuns = async (oursPaths: string[], baselinePaths: string[], connections: number) => {
      await measure(server.base, oursPaths, connections, 1) // warm-up
      await measure(baseline.base, baselinePaths, connections, 1)
      const ours: (LoadResult & { cpuPerRequest: number })[] = []
      const base: typeof ours = []
      for (let i = 0; i < settings.pairs; i++) {
        const [oursRun, baseRun] = await inTurn(
          i,
          () => measureWithCpu(server, oursPaths, connections, settings.pairSeconds),
          () => measureWithCpu(baseline, baselinePaths, connections, settings.pairSeconds),
        )
        ours.push(oursRun)
        base.push(baseRun)
      }
      return { ours, base }
    }
    const recordPaired = (figure: string, runs: Awaited<ReturnType<typeof pairedRuns>>, key: 'rps' | 'p50' | 'p99' | 'cpuPerRequest', unit: string, target?: Target) =>
      report.recordPairs(figure, runs.ours, runs.base, FRAMEWORK_FREE, (run) => run[key], unit, target)
    for (const connections of [1, 32]) {
      const runs = await pairedRuns(paths.ours, paths.baseline, connections)
      const client = connections === 1 ? '1 sequential client' : '32 connections (autocannon)'
      recordPaired(`pages, ${client}: req/s`, runs, 'rps', 'req/s', connections === 32 ? { of: 'ratio', is: '>=', bound: 0.9 } : undefined)
      recordPaired(`pages, ${client}: p50`, runs, 'p50', 'ms', connections === 1 ? { of: 'value', is: '<=', bound: 1 } : undefined)
      recordPaired(`pages, ${client}: p99`, runs, 'p99', 'ms', connections === 1 ? { of: 'value', is: '<=', bound: 3 } : undefined)
      recordPaired(`pages, ${client}: server CPU per request`, runs, 'cpuPerRequest', 'µs')
    }

    // Pages of 5 rows at the same cursors: what a request costs apart from its rows (auth, limits,
    // validation, cursor, routing, logging), which a 500-row page mostly hides.
    log('JSON pages of 5 rows')
    const fiveRows = cursorPaths(big, 5)
    const small = await pairedRuns(fiveRows.ours, fiveRows.baseline, 32)
    recordPaired('pages of 5 rows, 32 connections: req/s', small, 'rps', 'req/s')
    recordPaired('pages of 5 rows, 32 connections: server CPU per request', small, 'cpuPerRequest', 'µs')

    log('Page depth')
    // The sequential client: autocannon's whole milliseconds cannot tell 0.6 ms from 1 ms.
    const pageQuery = `from=${big.range1m.from}&to=${big.range1m.to}&limit=500`
    const firstPage = `/v1/tickets?${pageQuery}`
    const depth = await repeat(settings.runs, async () => ({
      first: await sequential(server.base, [firstPage], token, 2),
      last: await sequential(server.base, [paths.last.ours], token, 2),
    }))
    report.record({ figure: 'last page of 1M rows: p50 latency', value: summarise(depth.map((d) => d.last.p50)), unit: 'ms', baseline: { name: 'first page', value: summarise(depth.map((d) => d.first.p50)) }, target: { of: 'ratio', is: '<=', bound: 2 } })

    log('Full cursor walk')
    const walks = await repeat(settings.runs, (i) =>
      inTurn(
        i,
        () => cursorWalk(`${server.base}/v1/tickets?${pageQuery}`, { Authorization: `Bearer ${token}` }, big.bigTickets),
        () => cursorWalk(`${baseline.base}/?${pageQuery}`, {}, big.bigTickets),
      ),
    )
    report.record({ figure: `full cursor walk of ${big.bigTickets} rows, limit 500, one client`, value: summarise(walks.map(([ours]) => ours)), unit: 's', baseline: { name: FRAMEWORK_FREE, value: summarise(walks.map(([, base]) => base)) }, target: { of: 'value', is: '<', bound: 2.5 } })
  },
}
