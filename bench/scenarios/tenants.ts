import { load, repeat } from '../measure.ts'
import { fdsOf } from '../processes.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/** /v1/queues over 100 hot tenants, then over all 2,000 with 256 kept open: the tenant cache's hits and misses. */
export const tenants: Scenario = {
  name: 'tenants',
  title: '2,000 small tenants through a cache of 256 open files',
  needs: ['small-tenants', 'server'],
  async run({ small, server, report, settings, log }) {
    log('2,000 tenants, cache of 256')
    const hot = small.smallTokens.slice(0, 100)
    await load(server.base, ['/v1/queues'], hot, 8, 1) // open the hot ones
    const fdsBefore = fdsOf(server.pid)
    let fdsPeak = fdsBefore
    const timer = setInterval(() => (fdsPeak = Math.max(fdsPeak, fdsOf(server.pid))), 20)
    const hits = await repeat(settings.runs, () => load(server.base, ['/v1/queues'], hot, 8, settings.loadSeconds))
    // Random over 2,000 tenants with 256 cached: about 87% of requests open a file.
    const misses = await repeat(settings.runs, () => load(server.base, ['/v1/queues'], small.smallTokens, 8, settings.loadSeconds))
    clearInterval(timer)
    report.record({ figure: 'tenants: cache hits (100 hot tenants) p50', value: summarise(hits.map((r) => r.p50)), unit: 'ms' })
    report.record({ figure: 'tenants: cache hits p99', value: summarise(hits.map((r) => r.p99)), unit: 'ms' })
    report.record({ figure: 'tenants: random of 2,000 (~87% misses) p50', value: summarise(misses.map((r) => r.p50)), unit: 'ms', baseline: { name: 'cache hits', value: summarise(hits.map((r) => r.p50)) } })
    report.record({ figure: 'tenants: random of 2,000 p99', value: summarise(misses.map((r) => r.p99)), unit: 'ms', baseline: { name: 'cache hits', value: summarise(hits.map((r) => r.p99)) } })
    report.record({ figure: 'tenants: open files of the server (peak)', value: summarise([fdsPeak]), unit: 'fds', baseline: { name: 'before the run', value: summarise([fdsBefore]) } })
  },
}
