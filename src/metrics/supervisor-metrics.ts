import { Counter, Registry } from 'prom-client'

/** What the supervisor itself counts (docs/operations.md#metrics), beside its workers' metrics. */
export interface SupervisorMetrics {
  registry: Registry
  /** A worker that died was started again. */
  workerRestarted(): void
}

export function createSupervisorMetrics(): SupervisorMetrics {
  const registry = new Registry()
  const restarts = new Counter({
    name: 'queue_api_worker_restarts_total',
    help: 'Workers started again after one exited unexpectedly (a crash, a kill); a rolling restart (SIGHUP) is not counted.',
    registers: [registry],
  })
  return { registry, workerRestarted: () => restarts.inc() }
}
