import { ApiError } from '../errors/api-error.ts'
import { TenantUnavailableError } from '../tenant/pool.ts'
import type { LimitRejection, MetricsRecorder } from './recorder.ts'

const REJECTION_CODES: ReadonlySet<string> = new Set<LimitRejection>(['rate_limited', 'demo_quota_exceeded'])

/**
 * Counts what an error that answers a request says about the service: a tenant file that cannot
 * be served (503 data_unavailable), or a refusal by the limits (429). Called where a thrown error
 * becomes the response; anything else is counted only as a request of its status.
 */
export function recordRefusal(metrics: MetricsRecorder, error: unknown): void {
  if (error instanceof TenantUnavailableError) metrics.tenantUnavailable()
  else if (error instanceof ApiError && REJECTION_CODES.has(error.errorCode)) metrics.limitRejected(error.errorCode as LimitRejection)
}
