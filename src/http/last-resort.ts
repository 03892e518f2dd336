import type { Logger } from '../logger.ts'
import { errorResponse, toApiError } from './error-response.ts'
import { decorateResponse } from './response-headers.ts'

/**
 * Bun.serve's `error` handler: what is sent if an error ever escapes the pipeline, which answers
 * every request itself (http/pipeline.ts). Without it Bun sends a plain-text 500 with no request
 * id. Bun does not pass the request, so the lines logged have only the id the answer carries.
 */
export function lastResortResponse(error: unknown, logger: Logger): Response {
  const requestId = crypto.randomUUID()
  const response = errorResponse(toApiError(error, logger, requestId), requestId)
  logger.info('request', { requestId, status: response.status })
  return decorateResponse(response, requestId, { privateData: true })
}
