import type { Server } from 'bun'
import { Registry } from 'prom-client'
import type { Logger } from '../logger.ts'

/** The Prometheus text exposition format, version 0.0.4: what prom-client writes. */
const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE

export interface MetricsListenerOptions {
  host: string
  /** 0 picks a free port (the server's `port` says which). */
  port: number
  /** Renders one scrape: the whole service's metrics as Prometheus text. */
  scrape: () => Promise<string>
  logger: Logger
}

/**
 * The metrics listener (docs/operations.md#metrics): a server of its own on METRICS_HOST and
 * METRICS_PORT, apart from the API's, that answers `GET /metrics` and nothing else. It asks for
 * no token: who can reach it is decided by the address it binds (loopback by default).
 * Throws as Bun.serve does when the port is taken (EADDRINUSE).
 */
export function startMetricsListener(options: MetricsListenerOptions): Server<undefined> {
  const { scrape, logger } = options
  return Bun.serve({
    hostname: options.host,
    port: options.port,
    development: false,
    // Never shared with another process by accident (see http/port-in-use.ts).
    reusePort: false,
    // Matched by Bun on the target as sent (as the API's routes are, http/pipeline.ts): a target
    // that only resolves to /metrics (`/metrics/../metrics`, `/./metrics`) is the fallback's 404.
    routes: {
      '/metrics': async (request) => {
        if (request.method !== 'GET') return plain(405, 'Only GET is allowed on /metrics.\n', { Allow: 'GET' })
        try {
          return new Response(await scrape(), { headers: { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Cache-Control': 'no-store' } })
        } catch (error) {
          logger.error('metrics_scrape_failed', { error: String(error) })
          return plain(500, 'The metrics could not be collected; see the service log.\n')
        }
      },
    },
    fetch: () => plain(404, 'Not found: this listener serves GET /metrics only.\n'),
  })
}

function plain(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', ...headers } })
}
