import { memoryLogger } from '../../src/logger.ts'
import { serverMetrics } from '../../src/metrics/setup.ts'
import { configWith, type Config } from '../../src/config/config.ts'
import type { AppDeps } from '../../src/app.ts'
import { startServer, type TestServer } from '../support/harness.ts'

/** One sample of a scrape: `name{labels} value`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/**
 * Reads the Prometheus text format as the service writes it (one sample a line, label values
 * quoted with \\ and \" escaped, no timestamps); HELP and TYPE lines are kept by name.
 */
export function parseScrape(text: string): { samples: Sample[]; help: Map<string, string>; type: Map<string, string> } {
  const samples: Sample[] = []
  const help = new Map<string, string>()
  const type = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line)
    if (comment) {
      ;(comment[1] === 'HELP' ? help : type).set(comment[2]!, comment[3]!)
      continue
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, '$1')
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return { samples, help, type }
}

/** The value of the one sample named `name` whose labels include `labels`; 0 when there is none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value ?? 0
}

/** Every `queue_api_requests_total` sample as "operation status" → count. */
export function requestCounts(samples: Sample[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const sample of samples) if (sample.name === 'queue_api_requests_total') counts[`${sample.labels.operation} ${sample.labels.status}`] = sample.value
  return counts
}

export interface MeteredServer extends TestServer {
  /** The metrics listener's URL (GET /metrics). */
  metricsUrl: string
  scrapeText(): Promise<string>
  scrape(): Promise<Sample[]>
}

/**
 * The test app with metrics on, as a lone server runs it (src/metrics/setup.ts): the service's
 * registry fed by the app, the process metrics, and the metrics listener on a free loopback port.
 */
export async function startMeteredServer(overrides: Partial<Config> = {}, options: { limits?: AppDeps['limits']; limitsProbeEveryMs?: number } = {}): Promise<MeteredServer> {
  const metrics = serverMetrics(configWith({ metricsPort: 0, metricsHost: '127.0.0.1' }), memoryLogger('debug'), undefined)
  const server = await startServer(overrides, { ...options, metrics: metrics.recorder })
  const listener = metrics.listen()!
  const metricsUrl = listener.url
  const scrapeText = async () => {
    const response = await fetch(metricsUrl)
    if (response.status !== 200) throw new Error(`scrape answered ${response.status}`)
    return response.text()
  }
  return {
    ...server,
    metricsUrl,
    scrapeText,
    scrape: async () => parseScrape(await scrapeText()).samples,
    async close() {
      await listener.server.stop(true)
      await server.close()
    },
  }
}

const promtool = Bun.which('promtool')
const prometheus = Bun.which('prometheus')

/**
 * Whether `promtool` and `prometheus` (Debian's `prometheus` package) are here; prints why not,
 * and throws in CI, which installs them (scripts/install-prometheus.sh).
 */
export function prometheusAvailable(): boolean {
  if (promtool && prometheus) return true
  if (process.env.CI === 'true') throw new Error('prometheus/promtool are not installed: CI installs them with scripts/install-prometheus.sh')
  console.warn('warning: prometheus/promtool are not installed here; the Prometheus tests are skipped (apt-get install prometheus, or scripts/install-prometheus.sh)')
  return false
}

/** Runs promtool with `args` (and `stdin`); its exit status and what it printed. */
export async function runPromtool(args: string[], stdin?: string): Promise<{ status: number; output: string }> {
  const child = Bun.spawn([promtool!, ...args], { stdin: stdin === undefined ? 'ignore' : new Blob([stdin]), stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { status, output: stdout + stderr }
}

export const prometheusBinary = () => prometheus!
