import { ConfigError, loadConfig, shownUrl } from '../config/config.ts'
import { escapeTerminal } from './terminal-text.ts'

/** A server on every interface is asked on this machine's own: an image without /etc/hosts has no `localhost`. */
const LOOPBACK: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '::1' }

/** How long the health check waits for an answer: well inside a container engine's usual 30 s interval. */
const TIMEOUT_MS = 5_000

/**
 * `queue-api health`: asks the server that this environment configures (HOST, PORT) whether it is
 * alive (GET /healthz), or with `--ready` whether it is ready (GET /readyz), and exits 0 when it
 * is, 1 when it is not or does not answer, 2 when the settings are wrong (src/cli/queue-api.ts
 * refuses its arguments). Liveness is the container image's health check (the image has no curl,
 * no shell): a runtime may restart an unhealthy container, and a Redis outage, which fails
 * readiness, is not mended by a restart.
 */
export async function runHealthCheck({ ready = false }: { ready?: boolean } = {}): Promise<number> {
  let url: string
  try {
    const config = loadConfig()
    url = `${shownUrl(LOOPBACK[config.host] ?? config.host, config.port)}${ready ? '/readyz' : '/healthz'}`
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`queue-api health: configuration error: ${escapeTerminal(error.message)}\n`)
    return 2
  }
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) })
    await response.body?.cancel()
    if (response.status === 200) return 0
    process.stderr.write(`queue-api health: ${url} answered ${response.status}: ${ready ? 'not ready' : 'not alive'}\n`)
  } catch (error) {
    process.stderr.write(`queue-api health: no answer from ${url}: ${error instanceof Error ? error.message : String(error)}\n`)
  }
  return 1
}
