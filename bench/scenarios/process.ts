import { bigTenantFile } from '../data.ts'
import { cursorPaths } from '../cursors.ts'
import { inRounds, loadWithCpu } from '../measure.ts'
import type { Scenario } from '../scenario.ts'

/**
 * Diagnostic, run only when named (`--only process`): the framework-free baseline's page handler
 * inside the service's own process (bench/service-with-baseline-route.ts), against the same
 * handler in its own process, and our /v1/tickets on that same server; rotated in rounds of
 * `pairSeconds` at 32 connections, each side first in turn. It separates what our handler's code
 * costs from what running in the service's process costs any code.
 */
export const processEffect: Scenario = {
  name: 'process',
  title: "diagnostic: the baseline's page handler inside the service's process against its own",
  needs: ['big-tenant', 'baseline'],
  onlyWhenNamed: true,
  async run({ big, baseline, report, settings, log, startService }) {
    log('The process: the baseline page handler inside the service')
    const service = await startService({ BASELINE_FILE: bigTenantFile(big) }, 'bench-process', 'bench/service-with-baseline-route.ts')
    try {
      const paths = cursorPaths(big)
      const sides = [
        { target: service, paths: paths.ours },
        { target: service, paths: paths.baseline.map((path) => `/baseline-page${path.slice(1)}`) },
        { target: baseline, paths: paths.baseline },
      ]
      // Round 0 warms all three up and is not kept.
      const runs = await inRounds(sides, settings.pairs, (side) => loadWithCpu(side.target, side.paths, big.bigTokens[0]!, 32, settings.pairSeconds))
      const own = runs[2]!
      const versusOwn = (figure: string, side: typeof own, key: 'rps' | 'cpuPerRequest', unit: string) =>
        report.recordPairs(figure, side, own, 'the same handler in its own process', (run) => run[key], unit)
      versusOwn('process: baseline page handler inside the service, 32 conn.: req/s', runs[1]!, 'rps', 'req/s')
      versusOwn('process: baseline page handler inside the service: server CPU per request', runs[1]!, 'cpuPerRequest', 'µs')
      versusOwn('process: our /v1/tickets on that server, same rounds: req/s', runs[0]!, 'rps', 'req/s')
    } finally {
      await service.stop()
    }
  },
}
