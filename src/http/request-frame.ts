import type { Logger } from '../logger.ts'
import { ApiError } from '../errors/api-error.ts'
import { errorResponse, notFound, toApiError } from './error-response.ts'
import { beginRequest } from './request-info.ts'
import { decorateResponse, preflightResponse } from './response-headers.ts'
import { redactQuery } from './access-log.ts'
import { operationOf, type MetricsRecorder } from '../metrics/recorder.ts'
import { recordRefusal } from '../metrics/refusals.ts'

export interface RequestFrame {
  /** Answers one request: what the HTTP server calls. */
  fetch(request: Request): Promise<Response>
  /** Requests being answered right now. */
  active(): number
}

/**
 * What happens around every request, before and after the routes (docs/api.md#errors,
 * docs/operations.md#logs): an id for it; 404 for an unknown path and 405 for a method other
 * than GET (neither needs a token, neither counts), the CORS preflight; the headers every response
 * gets; anything thrown turned into the one error body; one access-log line.
 */
export function createRequestFrame(options: {
  knownPaths: ReadonlySet<string>
  handle: (request: Request) => Response | Promise<Response>
  logger: Logger
  metrics: MetricsRecorder
}): RequestFrame {
  const { knownPaths, handle, logger, metrics } = options
  let activeRequests = 0

  async function route(request: Request, path: string, requestId: string): Promise<Response> {
    const known = knownPaths.has(path)
    if (request.method === 'GET') return handle(request)
    if (request.method === 'OPTIONS' && known) return preflightResponse()
    if (!known) return errorResponse(notFound(), requestId)
    return errorResponse(new ApiError('method_not_allowed', `Only GET is allowed on ${path}.`, {}, { Allow: 'GET' }), requestId)
  }

  async function fetch(request: Request): Promise<Response> {
    const info = beginRequest(request)
    activeRequests++
    const url = new URL(request.url)
    let response: Response
    try {
      response = await route(request, url.pathname, info.id)
    } catch (error) {
      recordRefusal(metrics, error)
      response = errorResponse(toApiError(error, logger, info.id), info.id)
    } finally {
      activeRequests--
    }
    decorateResponse(response, info.id, { privateData: url.pathname.startsWith('/v1/') })
    const operation = operationOf(url.pathname)
    const seconds = (performance.now() - info.startedAt) / 1000
    // An export that streams is counted when its stream ends (its duration is the whole stream).
    if (!(operation === 'export' && response.status === 200)) metrics.requestAnswered(operation, response.status, seconds)
    logger.info('request', {
      requestId: info.id,
      method: request.method,
      path: url.pathname,
      query: redactQuery(url.search),
      status: response.status,
      durationMs: Math.round((performance.now() - info.startedAt) * 100) / 100,
      organisationId: info.organisationId,
      tokenId: info.tokenId,
    })
    return response
  }

  return { fetch, active: () => activeRequests }
}
