/**
 * Service configuration: every knob is declared once here, with its default and a one-line
 * description. `loadConfig` parses the environment once at start-up and fails fast with a
 * message that names the variable; nothing else in the code reads `process.env`.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export interface Config {
  port: number
  host: string
  dataDir: string
  rateLimitPerMinute: number
  demoDailyQuota: number
  tenantCacheSize: number
  logLevel: LogLevel
  exportStallTimeoutMs: number
  exportsPerToken: number
  exportsMax: number
  shutdownDrainMs: number
  /** Unset: the embedded limits (one process). */
  redisUrl: string | undefined
  workers: number
  /** Unset: no metrics listener, and nothing is recorded. */
  metricsPort: number | undefined
  metricsHost: string
  /** Serve a data directory this service never writes (a replica's copy); needs REDIS_URL. */
  readOnly: boolean
  /** Whether a first start on an empty data directory makes the sample organisation. */
  sampleData: SampleData
  /** READ_ONLY=1 on a replica's copy: /readyz fails once the copy was last confirmed current longer ago than this. */
  replicaMaxAgeS: number
}

/** `auto`: only for a person starting the server (standard error a terminal); see src/bootstrap.ts. */
export type SampleData = 'auto' | 'on' | 'off'

export class ConfigError extends Error {}

interface Setting<K extends keyof Config> {
  key: K
  env: string
  default: Config[K]
  description: string
  parse: (raw: string, env: string) => Config[K]
}

function integer(min: number, max: number) {
  return (raw: string, env: string): number => {
    if (!/^\d+$/.test(raw)) throw new ConfigError(`${env} must be a whole number, got "${raw}"`)
    const value = Number(raw)
    if (value < min || value > max) throw new ConfigError(`${env} must be between ${min} and ${max}, got ${value}`)
    return value
  }
}

function nonEmpty(raw: string, env: string): string {
  if (raw.trim() === '') throw new ConfigError(`${env} must not be empty`)
  return raw
}

/** The schemes Bun's Redis client accepts (TLS and Unix sockets included). */
const REDIS_SCHEMES = ['redis:', 'rediss:', 'valkey:', 'valkeys:', 'redis+tls:', 'redis+unix:', 'redis+tls+unix:']

/** The message never repeats the value: a Redis URL may carry a password. */
function redisUrl(raw: string, env: string): string {
  let scheme: string
  try {
    scheme = new URL(raw).protocol
  } catch {
    throw new ConfigError(`${env} must be a URL such as redis://host:6379 (redis://[user:password@]host:port[/db]); unset it for the embedded limits`)
  }
  if (!REDIS_SCHEMES.includes(scheme)) throw new ConfigError(`${env} must start with redis://, rediss:// or redis+unix://, got ${scheme}//`)
  return raw
}

function flag(raw: string, env: string): boolean {
  if (raw === '1' || raw === 'true') return true
  if (raw === '0' || raw === 'false') return false
  throw new ConfigError(`${env} must be 1 (or true) or 0 (or false), got "${raw}"`)
}

function sampleData(raw: string, env: string): SampleData {
  if (raw === 'auto' || raw === 'on' || raw === 'off') return raw
  throw new ConfigError(`${env} must be auto, on or off, got "${raw}"`)
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent']

function logLevel(raw: string, env: string): LogLevel {
  const level = raw.toLowerCase() as LogLevel
  if (!LOG_LEVELS.includes(level)) throw new ConfigError(`${env} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`)
  return level
}

/** The single declaration of every setting; the README's configuration table mirrors it (a test checks). */
export const SETTINGS = [
  { key: 'port', env: 'PORT', default: 3000, description: 'TCP port to listen on (0 picks a free one).', parse: integer(0, 65535) },
  { key: 'host', env: 'HOST', default: '127.0.0.1', description: 'Interface to bind; set 0.0.0.0 to serve other machines.', parse: nonEmpty },
  { key: 'dataDir', env: 'DATA_DIR', default: './data', description: 'Directory holding control.sqlite and orgs/<organisationId>.sqlite.', parse: nonEmpty },
  { key: 'rateLimitPerMinute', env: 'RATE_LIMIT_PER_MINUTE', default: 60, description: 'Counted requests per token in any 60-second sliding window.', parse: integer(1, 1_000_000) },
  { key: 'demoDailyQuota', env: 'DEMO_DAILY_QUOTA', default: 50, description: 'Counted requests per demo organisation per UTC day.', parse: integer(1, 1_000_000_000) },
  { key: 'tenantCacheSize', env: 'TENANT_CACHE_SIZE', default: 64, description: 'Tenant SQLite files kept open (LRU); leased handles stay open until released.', parse: integer(1, 100_000) },
  { key: 'logLevel', env: 'LOG_LEVEL', default: 'info', description: 'debug, info, warn, error or silent; access lines are logged at info.', parse: logLevel },
  { key: 'exportStallTimeoutMs', env: 'EXPORT_STALL_TIMEOUT_MS', default: 60_000, description: 'A CSV export whose reader takes nothing for this long is aborted and its statement released.', parse: integer(100, 86_400_000) },
  { key: 'exportsPerToken', env: 'EXPORTS_PER_TOKEN', default: 2, description: 'CSV exports of one token running at once (across every process sharing REDIS_URL); more are answered 429 too_many_exports.', parse: integer(1, 1000) },
  { key: 'exportsMax', env: 'EXPORTS_MAX', default: 32, description: 'CSV exports running at once, all tokens together (across every process sharing REDIS_URL); more are answered 429 too_many_exports.', parse: integer(1, 10_000) },
  { key: 'shutdownDrainMs', env: 'SHUTDOWN_DRAIN_MS', default: 30_000, description: 'On SIGTERM/SIGINT, and for a worker a rolling restart (SIGHUP) replaces, how long in-flight requests and exports may take to finish.', parse: integer(0, 3_600_000) },
  { key: 'redisUrl', env: 'REDIS_URL', default: undefined, description: 'Unset: the minute window in memory and the demo quota in control.sqlite (one process). Set: both, and the count of running exports, in this Redis, shared by every process that uses it.', parse: redisUrl },
  { key: 'workers', env: 'WORKERS', default: 1, description: 'Server processes sharing the port (reusePort) and the data directory; more than 1 needs REDIS_URL.', parse: integer(1, 256) },
  { key: 'metricsPort', env: 'METRICS_PORT', default: undefined, description: 'Unset: no metrics. Set: Prometheus metrics on GET /metrics of a second listener on this port (0 picks a free one), never on PORT.', parse: integer(0, 65535) },
  { key: 'metricsHost', env: 'METRICS_HOST', default: '127.0.0.1', description: 'Interface the metrics listener binds; it has no token, so whoever reaches it can read the metrics.', parse: nonEmpty },
  { key: 'readOnly', env: 'READ_ONLY', default: false, description: '1: serve a data directory the service never writes (a replica\'s copy, a read-only mount); needs REDIS_URL, and last-used times of tokens are not kept.', parse: flag },
  { key: 'sampleData', env: 'SAMPLE_DATA', default: 'auto', description: 'A first start on an empty data directory makes a sample organisation: auto only when standard error is a terminal (a person started it), on always (its token printed only to a terminal), off never.', parse: sampleData },
  { key: 'replicaMaxAgeS', env: 'REPLICA_MAX_AGE_S', default: 30, description: 'With READ_ONLY=1 on a replica\'s copy: /readyz fails (the balancer takes the replica out) once the copy was last confirmed current against the storage longer ago than this many seconds.', parse: integer(1, 86_400) },
] as const satisfies readonly Setting<keyof Config>[]

/** Builds the configuration from an environment (defaults for what is unset). Throws ConfigError. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const config = {} as Record<keyof Config, unknown>
  for (const setting of SETTINGS as readonly Setting<keyof Config>[]) {
    const raw = env[setting.env]
    config[setting.key] = raw === undefined ? setting.default : setting.parse(raw, setting.env)
  }
  return checked(config as Config)
}

/** Rules between settings. */
function checked(config: Config): Config {
  if (config.workers > 1 && config.redisUrl === undefined) {
    // In-process windows would let a token make WORKERS × the limit requests a minute.
    throw new ConfigError(
      `WORKERS=${config.workers} needs REDIS_URL: without it each process keeps its own minute window and a token could make ${config.workers} × RATE_LIMIT_PER_MINUTE requests a minute`,
    )
  }
  if (config.readOnly && config.redisUrl === undefined) {
    // The embedded demo quota is counted in control.sqlite, which a read-only copy cannot write.
    throw new ConfigError('READ_ONLY=1 needs REDIS_URL: the minute window and the demo quota must be kept where they can be written')
  }
  if (config.metricsPort !== undefined && config.metricsPort !== 0 && config.metricsPort === config.port) {
    // The API's port answers /metrics with 404: the metrics have a listener of their own.
    throw new ConfigError(`METRICS_PORT must differ from PORT (both are ${config.port}): the metrics have a listener of their own`)
  }
  return config
}

/** Defaults with overrides: what tests and the benchmark start from. */
export function configWith(overrides: Partial<Config>): Config {
  return { ...loadConfig({}), ...overrides }
}

/**
 * The URL the server is reached at, as the logs and the first start's instructions show it: a
 * wildcard host is shown as localhost, an IPv6 address in brackets.
 */
export function shownUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`
}
