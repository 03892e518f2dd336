import { NotFoundError, ParseError, ValidationError } from 'elysia'
import { ApiError, errorBody } from '../errors/api-error.ts'
import { TenantUnavailableError } from '../tenant/lease.ts'
import type { Logger } from '../logger.ts'

/** Maps anything thrown while answering a request to an ApiError; unexpected errors become 500. */
export function toApiError(error: unknown, logger: Logger, requestId: string): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof TenantUnavailableError) {
    // The kind of failure only: the reason, with SQLite's message, is in the pool's log line, under the same request id.
    return new ApiError('data_unavailable', `The organisation's data cannot be read right now (its data file is ${error.kind}); try again later.`)
  }
  if (error instanceof NotFoundError) return notFound()
  if (error instanceof ValidationError || error instanceof ParseError) {
    return new ApiError('invalid_request', 'The request is not valid.')
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
