import type { Logger } from '../logger.ts'
import { ApiError } from '../errors/api-error.ts'
import { errorResponse } from './error-response.ts'
import { decorateResponse } from './response-headers.ts'

/**
 * Bun.serve's `error` handler: what is sent if an error ever escapes the pipeline, which answers
 * every request itself (http/pipeline.ts). Without it Bun sends a plain-text 500 with no request
 * id. Bun does not pass the request, so the line logged has only the id both share.
 */
export function lastResortResponse(error: unknown, logger: Logger): Response {
  const requestId = crypto.randomUUID()
  logger.error('unhandled_error', {
    requestId,
    error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
  })
  logger.info('request', { requestId, status: 500 })
  const response = errorResponse(new ApiError('internal', 'An unexpected error occurred; it has been logged with this request id.'), requestId)
  return decorateResponse(response, requestId, { privateData: true })
}
