import { cursorPaths } from '../cursors.ts'
import { inRounds, loadWithCpu } from '../measure.ts'
import type { ServerHandle } from '../processes.ts'
import type { Scenario } from '../scenario.ts'
import { PIPELINE_LAYERS } from '../../src/http/layers-off.ts'

/**
 * Diagnostic, run only when named (`--only layers`): where a 500-row page's time goes. The
 * service as started (supervisor and worker), the same in one process, and that process with
 * each layer of the request path switched off in turn (src/http/layers-off.ts), then with every
 * layer off but the query (our page alone in the service's process), each against the
 * framework-free server in the same rounds: 32 connections for `pairSeconds` each, every side
 * first in turn, round 0 a warm-up. Everything else on at the defaults (LOG_LEVEL=info,
 * METRICS_PORT set). A layer's cost is the gap it closes.
 */
export const layers: Scenario = {
  name: 'layers',
  title: 'diagnostic: 500-row pages with each layer of the request path switched off in turn',
  needs: ['big-tenant', 'baseline'],
  onlyWhenNamed: true,
  async run({ big, baseline, report, settings, log, startService }) {
    log('Layers: each switched off in turn')
    const paths = cursorPaths(big)
    const metricsOn = { METRICS_PORT: '0' }
    const started: ServerHandle[] = []
    try {
      const start = async (env: Record<string, string>, name: string, script?: string) => {
        const server = await startService({ ...metricsOn, ...env }, name, script)
        started.push(server)
        return server
      }
      const sides: { name: string; target: { base: string; pids: number[] }; paths: string[] }[] = [
        { name: 'the service as started (supervisor + worker)', target: await start({}, 'bench-layers-main'), paths: paths.ours },
        { name: 'one process, everything on', target: await start({ LAYERS_OFF: '' }, 'bench-layers-all', 'bench/service-layers.ts'), paths: paths.ours },
      ]
      for (const layer of PIPELINE_LAYERS) {
        sides.push({ name: `one process, ${layer} off`, target: await start({ LAYERS_OFF: layer }, `bench-layers-${layer}`, 'bench/service-layers.ts'), paths: paths.ours })
      }
      // Every layer off but the handler's own work (query, JSON, cursor, snapshot): what is left is the page itself in the service's process.
      const allButQuery = PIPELINE_LAYERS.filter((layer) => layer !== 'query').join(',')
      sides.push({ name: 'one process, every layer off but the query', target: await start({ LAYERS_OFF: allButQuery }, 'bench-layers-all-off', 'bench/service-layers.ts'), paths: paths.ours })
      sides.push({ name: 'baseline', target: baseline, paths: paths.baseline })
      const runs = await inRounds(sides, settings.pairs, (side) => loadWithCpu(side.target, side.paths, big.bigTokens[0]!, 32, settings.pairSeconds))
      const base = runs[sides.length - 1]!
      for (let i = 0; i < sides.length - 1; i++) {
        report.recordPairs(`layers: ${sides[i]!.name}: req/s`, runs[i]!, base, 'framework-free Bun.serve', (run) => run.rps, 'req/s')
        report.recordPairs(`layers: ${sides[i]!.name}: server CPU per request`, runs[i]!, base, 'framework-free Bun.serve', (run) => run.cpuPerRequest, 'µs')
      }
    } finally {
      for (const server of started) await server.stop()
    }
  },
}
