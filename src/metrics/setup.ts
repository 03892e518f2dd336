import type { Server } from 'bun'
import type { Registry } from 'prom-client'
import type { Config } from '../config/config.ts'
import type { Logger } from '../logger.ts'
import { answerScrapesFromParent, WorkerMetrics } from './across-workers.ts'
import { startMetricsListener } from './listener.ts'
import { createProcessMetrics } from './process-metrics.ts'
import { createServiceMetrics } from './prometheus.ts'
import { noMetrics, type MetricsRecorder } from './recorder.ts'

/**
 * What each kind of process does for the metrics (docs/operations.md#metrics), for the entry
 * file. With METRICS_PORT unset none of this runs: the app gets the no-op recorder and no
 * listener opens.
 *
 * - a lone server records and serves its own metrics;
 * - a worker of WORKERS=N records, and answers its parent over IPC; it opens no listener;
 * - the parent of WORKERS=N records nothing of its own but its process metrics, and serves
 *   every worker's metrics combined.
 */

export interface MetricsListening {
  server: Server<undefined>
  /** The URL to scrape, as logged. */
  url: string
}

function listen(config: Config, logger: Logger, scrape: () => Promise<string>): MetricsListening {
  const server = startMetricsListener({ host: config.metricsHost, port: config.metricsPort!, scrape, logger })
  const host = config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost
  const url = `http://${host}:${server.port}/metrics`
  logger.info('metrics_listening', { url })
  return { server, url }
}

/** A lone server: the recorder for its app and, once called, its listener. */
export function loneServerMetrics(config: Config, logger: Logger): { recorder: MetricsRecorder; listen(): MetricsListening | undefined } {
  if (config.metricsPort === undefined) return { recorder: noMetrics, listen: () => undefined }
  const service = createServiceMetrics()
  const perProcess = createProcessMetrics()
  const scrape = async () => (await service.registry.metrics()) + (await perProcess.metrics())
  return { recorder: service.recorder, listen: () => listen(config, logger, scrape) }
}

/** A worker of WORKERS=N: the recorder for its app; its parent asks it for what it recorded. */
export function workerMetrics(config: Config, index: number): MetricsRecorder {
  if (config.metricsPort === undefined) return noMetrics
  const service = createServiceMetrics()
  answerScrapesFromParent(service.registry, createProcessMetrics(String(index)))
  return service.recorder
}

/** The parent of WORKERS=N: the channel to give the supervisor and, once called, the listener that combines the workers. */
export function parentMetrics(config: Config, logger: Logger): { channel: WorkerMetrics; listen(): MetricsListening } | undefined {
  if (config.metricsPort === undefined) return undefined
  const channel = new WorkerMetrics()
  const own: Registry = createProcessMetrics('parent')
  const scrape = async () => {
    const parentProcess = (await own.getMetricsAsJSON()).map((metric) => ({ ...metric, aggregator: 'first' as const }))
    const combined: Registry = await channel.collect(parentProcess as Parameters<WorkerMetrics['collect']>[0])
    return combined.metrics()
  }
  return { channel, listen: () => listen(config, logger, scrape) }
}
