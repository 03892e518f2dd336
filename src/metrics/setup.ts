import type { Server } from 'bun'
import { shownUrl, type Config } from '../config/config.ts'
import type { Logger } from '../logger.ts'
import { answerScrapesFromParent, REFRESH_EVERY_MS, WorkerMetrics } from './across-workers.ts'
import { startMetricsListener } from './listener.ts'
import { createProcessMetrics } from './process-metrics.ts'
import { createServiceMetrics } from './prometheus.ts'
import { createSupervisorMetrics } from './supervisor-metrics.ts'
import { noMetrics, type MetricsRecorder } from './recorder.ts'
import { registerReplicaMetrics } from './replica-metrics.ts'
import { copyHealth } from '../replica/copy-state.ts'

/**
 * What each kind of process does for the metrics (docs/operations.md#metrics), for the entry
 * file. With METRICS_PORT unset none of this runs: the app gets the no-op recorder and no
 * listener opens.
 *
 * - a lone server records and serves its own metrics;
 * - a worker of WORKERS=N records, and answers its parent over IPC; it opens no listener;
 * - the parent of WORKERS=N records nothing but its process metrics, and serves every worker's
 *   metrics combined.
 */

export interface MetricsListening {
  server: Server<undefined>
  /** What to scrape, as logged. */
  url: string
}

/** Opens the metrics listener (throws EADDRINUSE when METRICS_PORT is taken) and logs its URL. */
function listen(config: Config, logger: Logger, scrape: () => Promise<string>): MetricsListening {
  const server = startMetricsListener({ host: config.metricsHost, port: config.metricsPort!, scrape, logger })
  const url = `${shownUrl(config.metricsHost, server.port ?? config.metricsPort!)}/metrics`
  logger.info('metrics_listening', { url })
  return { server, url }
}

export interface ServerMetrics {
  /** What the app records into. */
  recorder: MetricsRecorder
  /** Opens the listener, if this process has one. */
  listen(): MetricsListening | undefined
  /** Once the drain has ended: a worker hands its final metrics to its parent (resolves once kept). */
  final(): Promise<void>
}

const nothingToHand = async () => {}

/** A lone server (`worker` undefined) or a worker of WORKERS=N. */
export function serverMetrics(config: Config, logger: Logger, worker: number | undefined): ServerMetrics {
  if (config.metricsPort === undefined) return { recorder: noMetrics, listen: () => undefined, final: nothingToHand }
  const service = createServiceMetrics()
  if (worker !== undefined) {
    const parent = answerScrapesFromParent(service.registry, createProcessMetrics(String(worker)))
    return { recorder: service.recorder, listen: () => undefined, final: parent.final }
  }
  const perProcess = createProcessMetrics()
  const scrape = async () => (await service.registry.metrics()) + (await perProcess.metrics())
  return { recorder: service.recorder, listen: () => listen(config, logger, scrape), final: nothingToHand }
}

/**
 * The supervisor: the channel to its workers, what it counts itself, and its listener; undefined
 * when metrics are off.
 */
export function parentMetrics(config: Config, logger: Logger): { channel: WorkerMetrics; workerRestarted(): void; listen(): MetricsListening } | undefined {
  if (config.metricsPort === undefined) return undefined
  const supervisor = createSupervisorMetrics()
  if (config.readOnly) registerReplicaMetrics(supervisor.registry, () => copyHealth(config.dataDir, Date.now()), config.replicaMaxAgeS)
  const channel = new WorkerMetrics({ parentProcess: createProcessMetrics('parent'), parent: supervisor.registry })
  // Between scrapes too: a worker killed outright then loses at most about this much of its counts.
  setInterval(() => void channel.refresh(), REFRESH_EVERY_MS).unref()
  return { channel, workerRestarted: supervisor.workerRestarted, listen: () => listen(config, logger, async () => (await channel.collect()).metrics()) }
}
