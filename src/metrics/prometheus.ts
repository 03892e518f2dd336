import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { ExportStalls } from './export-stalls.ts'
import { LIMIT_REJECTIONS, OPERATIONS, type LimitRejection, type MetricsRecorder, type Operation } from './recorder.ts'
import { SERVICE_VERSION, serviceRevision } from './build-info.ts'

/**
 * The service's own metrics in a prom-client registry (docs/operations.md#metrics): names under
 * `queue_api_`, base units (seconds, bytes), `_total` on counters, fixed label sets.
 *
 * Each metric also says how the parent of WORKERS=N combines it over the workers (prom-client's
 * `aggregator`): counters and histograms are summed, the in-flight and open-connection gauges
 * too; the limits store is up only if it is up for every worker (min); the build is the same
 * everywhere (first).
 */

/**
 * Request durations from a 1 ms page to a 10 s export and past it (a five-minute export still
 * lands in a bucket, not only in +Inf): roughly ×2.5 steps, 18 buckets.
 */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]

export interface ServiceMetrics {
  recorder: MetricsRecorder
  registry: Registry
}

/** A fresh registry holding every metric of the service, and the recorder that feeds it. */
export function createServiceMetrics(): ServiceMetrics {
  const registry = new Registry()
  const registers = [registry]

  const requests = new Counter({
    name: 'queue_api_requests_total',
    help: 'Requests answered, by operation (queues, tickets, export, other) and HTTP status.',
    labelNames: ['operation', 'status'] as const,
    registers,
  })
  const duration = new Histogram({
    name: 'queue_api_request_duration_seconds',
    help: 'Seconds from the arrival of a request to its last byte (the whole stream of an export), by operation.',
    labelNames: ['operation'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  })
  const exportRows = new Counter({ name: 'queue_api_export_rows_total', help: 'Ticket rows written by CSV exports.', registers })
  const exportBytes = new Counter({
    name: 'queue_api_export_bytes_total',
    help: 'Bytes of CSV written by exports, counted before compression.',
    registers,
  })
  const exportsInFlight = new Gauge({ name: 'queue_api_exports_in_flight', help: 'CSV exports streaming now.', registers })
  const stalls = new ExportStalls()
  new Gauge({
    name: 'queue_api_export_stall_seconds',
    help: 'Seconds since the running export that has gone longest without writing a row wrote one (or started); 0 when none runs.',
    // Across workers, the worst export anywhere.
    aggregator: 'max',
    registers,
    collect() {
      this.set(stalls.longestSeconds())
    },
  })
  const rejections = new Counter({
    name: 'queue_api_limit_rejections_total',
    help: 'Requests refused 429 by the limits, by reason (rate_limited, demo_quota_exceeded, too_many_exports).',
    labelNames: ['reason'] as const,
    registers,
  })
  const limitsUp = new Gauge({
    name: 'queue_api_limits_backend_up',
    help: 'Whether the limits store answers (1) or requests are refused 503 limits_unavailable because it does not (0).',
    aggregator: 'min',
    registers,
  })
  let openConnections = () => 0
  new Gauge({
    name: 'queue_api_tenant_pool_open',
    help: 'Tenant SQLite connections open now.',
    registers,
    collect() {
      this.set(openConnections())
    },
  })
  const tenantOpens = new Counter({ name: 'queue_api_tenant_opens_total', help: 'Tenant SQLite files opened (new connections).', registers })
  const tenantUnavailable = new Counter({
    name: 'queue_api_tenant_unavailable_total',
    help: 'Requests answered 503 data_unavailable because a tenant file could not be served.',
    registers,
  })
  // Each 503 with a cause an alert of its own names, so that the 5xx-ratio alert can tell it from
  // any other 5xx (deploy/prometheus/alerts.yml).
  const limitsUnavailable = new Counter({
    name: 'queue_api_limits_unavailable_total',
    help: 'Operations answered 503 limits_unavailable because the limits store did not answer.',
    registers,
  })
  new Gauge({
    name: 'queue_api_build_info',
    help: 'Always 1; the labels say which release (version) and which commit (revision) runs.',
    labelNames: ['version', 'revision'] as const,
    aggregator: 'first',
    registers,
  }).set({ version: SERVICE_VERSION, revision: serviceRevision() }, 1)

  // Series that exist before their first event, so that rate() and the alerts see a 0 rather
  // than nothing.
  for (const operation of OPERATIONS) duration.zero({ operation })
  for (const reason of LIMIT_REJECTIONS) rejections.inc({ reason }, 0)
  limitsUp.set(1)

  // A child per label set, made once: the hot path then skips prom-client's label validation.
  const durationOf = new Map(OPERATIONS.map((operation) => [operation, duration.labels({ operation })]))
  const rejectionsOf = new Map(LIMIT_REJECTIONS.map((reason) => [reason, rejections.labels({ reason })]))
  const requestsOf = new Map<string, Counter.Internal>()

  const recorder: MetricsRecorder = {
    requestAnswered(operation: Operation, status: number, seconds: number) {
      const key = `${operation} ${status}`
      let counter = requestsOf.get(key)
      if (!counter) {
        counter = requests.labels({ operation, status: String(status) })
        requestsOf.set(key, counter)
      }
      counter.inc()
      durationOf.get(operation)!.observe(seconds)
    },
    exportStarted() {
      exportsInFlight.inc()
      const running = stalls.started()
      return {
        wrote(rows: number, bytes: number) {
          exportRows.inc(rows)
          exportBytes.inc(bytes)
          if (rows > 0) running.wroteRows()
        },
        ended() {
          if (running.ended()) exportsInFlight.dec()
        },
      }
    },
    limitRejected(reason: LimitRejection) {
      rejectionsOf.get(reason)!.inc()
    },
    limitsBackendUp(up: boolean) {
      limitsUp.set(up ? 1 : 0)
    },
    tenantOpened() {
      tenantOpens.inc()
    },
    tenantUnavailable() {
      tenantUnavailable.inc()
    },
    limitsUnavailable() {
      limitsUnavailable.inc()
    },
    observeTenantPool(read: () => number) {
      openConnections = read
    },
  }
  return { recorder, registry }
}

