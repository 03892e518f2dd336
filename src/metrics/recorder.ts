/**
 * The metrics seam: what the service tells its metrics, in its own words. The request pipeline,
 * the export, the limits and the tenant pool call these methods; whether anything is kept is the
 * implementation's business (Prometheus when METRICS_PORT is set, nothing otherwise). Every
 * argument is from a fixed set or a number: nothing a caller chooses can become a label.
 */

/** What a request was for: the three operations of the contract, and everything else. */
export type Operation = 'queues' | 'tickets' | 'export' | 'other'

export const OPERATIONS: readonly Operation[] = ['queues', 'tickets', 'export', 'other']

/** Why the limits refused a request (each answered 429). */
export type LimitRejection = 'rate_limited' | 'demo_quota_exceeded' | 'too_many_exports'

export const LIMIT_REJECTIONS: readonly LimitRejection[] = ['rate_limited', 'demo_quota_exceeded', 'too_many_exports']

const OPERATION_OF_PATH: Readonly<Record<string, Operation>> = {
  '/v1/queues': 'queues',
  '/v1/tickets': 'tickets',
  '/v1/exports/tickets.csv': 'export',
}

/** The operation of a request path; any path outside the three operations (a typo too) is `other`. */
export function operationOf(path: string): Operation {
  return OPERATION_OF_PATH[path] ?? 'other'
}

export interface MetricsRecorder {
  /**
   * A request was answered: once per request, with the status sent and the seconds from its
   * arrival to its last byte (an export's whole stream). Answers given before a route runs
   * (401, 402, 429, 404) count too.
   */
  requestAnswered(operation: Operation, status: number, seconds: number): void
  /** An export's stream began; what it writes and its end are told to the handle returned. */
  exportStarted(): ExportProgress
  /** The limits refused a request. */
  limitRejected(reason: LimitRejection): void
  /** Whether the limits store answers: false while requests are refused because it does not (fail closed). */
  limitsBackendUp(up: boolean): void
  /** A tenant file was opened (a connection made, not a lease of an open one). */
  tenantOpened(): void
  /** A request was answered 503 `data_unavailable` because a tenant file could not be served. */
  tenantUnavailable(): void
  /** An operation was answered 503 `limits_unavailable` (the limits store does not answer: fail closed). */
  limitsUnavailable(): void
  /** Reads the number of open tenant connections when metrics are collected. */
  observeTenantPool(openConnections: () => number): void
}

/** One running export, as the metrics follow it. */
export interface ExportProgress {
  /** It wrote `rows` more rows, `bytes` more bytes of CSV (before compression): told per chunk, so a long export shows progress. */
  wrote(rows: number, bytes: number): void
  /** Its stream ended in any way; later calls do nothing. */
  ended(): void
}

const noProgress: ExportProgress = { wrote() {}, ended() {} }

/** The recorder when metrics are off: every call does nothing. */
export const noMetrics: MetricsRecorder = {
  requestAnswered() {},
  exportStarted: () => noProgress,
  limitRejected() {},
  limitsBackendUp() {},
  tenantOpened() {},
  tenantUnavailable() {},
  limitsUnavailable() {},
  observeTenantPool() {},
}
