import { cursorPaths } from '../cursors.ts'
import { inTurn, load, repeat } from '../measure.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/**
 * The limiter's cost: pages at 32 connections spread over 20,000 tokens on a server with the
 * default 60/min, against one token on the run's server (limit raised). Both sides are measured
 * here, in turns, so that `--only limiter` needs no other scenario.
 */
export const limiter: Scenario = {
  name: 'limiter',
  title: 'pages over 20,000 tokens at the default 60/min, against one token with the limit raised',
  needs: ['big-tenant', 'server'],
  async run({ big, server, report, settings, log, startService }) {
    log('Limiter with 20,000 tokens at the default 60/min')
    const limited = await startService({ RATE_LIMIT_PER_MINUTE: '60' }, 'bench-limiter')
    try {
      const paths = cursorPaths(big)
      const manyTokens = () => load(limited.base, paths.ours, big.bigTokens, 32, settings.loadSeconds)
      const oneToken = () => load(server.base, paths.ours, [big.bigTokens[0]!], 32, settings.loadSeconds)
      await load(limited.base, paths.ours, big.bigTokens, 32, 1) // warm-up
      await load(server.base, paths.ours, [big.bigTokens[0]!], 32, 1)
      const runs = await repeat(settings.runs, (i) => inTurn(i, manyTokens, oneToken))
      report.record({
        figure: 'pages (32 conn.), 20,000 tokens, limit 60/min: req/s',
        value: summarise(runs.map(([many]) => many.rps)),
        unit: 'req/s',
        baseline: { name: 'one token, limit raised', value: summarise(runs.map(([, one]) => one.rps)) },
      })
    } finally {
      await limited.stop()
    }
  },
}
