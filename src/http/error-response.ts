import { ApiError, errorBody } from '../errors/api-error.ts'
import { TenantUnavailableError, type TenantFailureKind } from '../tenant/lease.ts'
import { ControlStoreUnavailableError } from '../control/control-file.ts'
import type { Logger } from '../logger.ts'
import { decorateResponse } from './response-headers.ts'

/** A tenant file's failure, as the 503's message says it. */
const FILE_FAILURE: Record<TenantFailureKind, string> = {
  missing: 'is missing',
  'not restored on this replica yet': 'is not restored on this replica yet',
  damaged: 'is damaged',
  'unknown schema version': 'has a schema version this release does not know',
  busy: 'is busy',
  unreadable: 'cannot be read',
  'holding a row that breaks the tenant contract': 'holds a row that breaks the tenant contract',
}

/** Seconds a client waits for a replica to restore an organisation's file: about two rounds of the documented --every 5. */
const NOT_RESTORED_RETRY_SECONDS = 10

/**
 * Maps anything thrown while answering a request to an ApiError: the domain errors of the layers
 * below, which know nothing of HTTP, to their answers (keeping the error as `cause`, which the
 * metrics read); unexpected errors to a logged 500.
 */
export function toApiError(error: unknown, logger: Logger, requestId: string): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof TenantUnavailableError) {
    // The kind of failure only: the reason, with SQLite's message, is in the pool's log line, under the same request id.
    // A replica's restore loop puts a new organisation's file in place within a round or two.
    const retry: Record<string, string> = error.kind === 'not restored on this replica yet' ? { 'Retry-After': String(NOT_RESTORED_RETRY_SECONDS) } : {}
    return new ApiError('data_unavailable', `The organisation's data cannot be read right now (its data file ${FILE_FAILURE[error.kind]}); try again later.`, {}, retry, error)
  }
  if (error instanceof ControlStoreUnavailableError) {
    // The body a tenant file's 503 has; /readyz says not ready meanwhile.
    return new ApiError('data_unavailable', 'The service cannot read its own data right now; try again shortly.', {}, {}, error)
  }
  // Full detail goes to the log only: no stack, SQL or path in the body.
  logger.error('unhandled_error', {
    requestId,
    error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
  })
  return new ApiError('internal', 'An unexpected error occurred; it has been logged with this request id.')
}

export function notFound(): ApiError {
  return new ApiError('not_found', 'No such resource; the API serves GET /v1/queues, /v1/tickets and /v1/exports/tickets.csv.')
}

/** The one error response shape (docs/api.md#errors). */
export function errorResponse(error: ApiError, requestId: string): Response {
  return new Response(errorBody(error, requestId), {
    status: error.status,
    headers: { 'Content-Type': 'application/json', ...error.headers },
  })
}

/**
 * Bun.serve's `error` handler: what is sent if an error ever escapes the pipeline, which answers
 * every request itself (http/pipeline.ts). Without it Bun sends a plain-text 500 with no request
 * id. Bun does not pass the request, so the lines logged have only the id the answer carries.
 */
export function lastResortResponse(error: unknown, logger: Logger): Response {
  const requestId = crypto.randomUUID()
  const apiError = toApiError(error, logger, requestId)
  const response = errorResponse(apiError, requestId)
  logger.info('request', { requestId, status: response.status, error: apiError.errorCode })
  return decorateResponse(response, requestId, { privateData: true })
}
