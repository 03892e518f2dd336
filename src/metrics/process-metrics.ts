import { collectDefaultMetrics, Registry } from 'prom-client'

/**
 * prom-client's default metrics of this process (CPU, memory, file descriptors, event-loop lag,
 * heap, GC) in a registry of their own, labelled `worker` under WORKERS=N so that the parent's
 * scrape keeps each worker's apart instead of adding them up.
 * Left out: the `nodejs_active_*_total` gauges, always 0 under Bun and named like counters.
 */
const LEFT_OUT = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

export function createProcessMetrics(worker?: string): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, ...(worker === undefined ? {} : { labels: { worker } }) })
  for (const name of LEFT_OUT) registry.removeSingleMetric(name)
  return registry
}
