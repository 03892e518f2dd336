import { Elysia, type AnyElysia } from 'elysia'
import type { Logger } from '../logger.ts'
import { ApiError } from '../errors/api-error.ts'
import { createRequestContext, jsonResponse, type Handler, type RequestContext } from './context.ts'
import { errorResponse, notFound, toApiError } from './error-response.ts'
import { decorateResponse, preflightResponse } from './response-headers.ts'

/** What observers of the pipeline are told, once per request, when its response is ready. */
export interface AnsweredRequest {
  context: RequestContext
  response: Response
  /** The route that answered (its path as registered); null when none matched (404, 405, preflight). */
  route: string | null
  /** Milliseconds from arrival to the response being ready; for a streamed export, `context.bodyEnded` settles at its last byte. */
  durationMs: number
  /** The error the response was made from, when it is an error answer (thrown by a step, or 404/405 without a route). */
  error?: ApiError
}

/**
 * Told about every answered request, in the order given, after the response is complete but
 * before it is sent. The access log is one (http/access-log.ts); metrics can be another. An
 * observer that throws is logged and does not change the response.
 */
export type RequestObserver = (answered: AnsweredRequest) => void

export interface Pipeline {
  /** Adds a GET route with the one handler shape. */
  route(path: string, handler: Handler): void
  /** Adds an Elysia plugin whose routes answer with whole responses (the pages); the hooks apply to them too. */
  mount(plugin: AnyElysia): void
  /** Answers one request: what the HTTP server calls. */
  fetch(request: Request): Promise<Response>
  /** Requests being answered right now, and answered ones whose body still streams (exports). */
  active(): number
}

/**
 * The one request pipeline (docs/architecture.md#the-path-of-a-request), every step an Elysia
 * hook on one instance:
 *
 * 1. onRequest makes the RequestContext, and answers at once a method other than GET (HEAD
 *    included), which needs no route: the CORS preflight, 405 on a known path, 404 on an unknown
 *    one. None needs a token, none counts.
 * 2. The route's handler gets the context and returns a Response.
 * 3. Anything thrown, Elysia's own errors (no route matched, validation) included, becomes the
 *    one error body in onError, through http/error-response.ts.
 * 4. `answer`, reached from each of the three, adds the headers every response gets and tells
 *    the observers (the access log first). It runs once per request.
 */
export function createPipeline(options: { logger: Logger; observers: readonly RequestObserver[] }): Pipeline {
  const { logger, observers } = options
  const pending = new Set<RequestContext>()
  let knownPaths: Set<string> | undefined

  function answer(context: RequestContext, response: Response, route: string | null, error?: ApiError): Response {
    if (context.response) return context.response
    context.response = response
    if (context.bodyEnded) void context.bodyEnded.finally(() => pending.delete(context))
    else pending.delete(context)
    for (const [name, value] of Object.entries(context.responseHeaders)) {
      if (!response.headers.has(name)) response.headers.set(name, value)
    }
    decorateResponse(response, context.id, { privateData: context.path.startsWith('/v1/') })
    const answered: AnsweredRequest = { context, response, route, durationMs: Math.round((performance.now() - context.startedAt) * 100) / 100, error }
    for (const observe of observers) {
      try {
        observe(answered)
      } catch (error) {
        logger.error('observer_failed', { requestId: context.id, error: String(error) })
      }
    }
    return response
  }

  /** Answers a request that is not a GET, without routing: the preflight, 404 or 405. */
  function answerWithoutRoute(context: RequestContext): Response {
    knownPaths ??= new Set(app.routes.map((route) => route.path))
    const known = knownPaths.has(context.path)
    if (context.method === 'OPTIONS' && known) return answer(context, preflightResponse(), null)
    const error = known ? new ApiError('method_not_allowed', `Only GET is allowed on ${context.path}.`, {}, { Allow: 'GET' }) : notFound()
    return answer(context, errorResponse(error, context.id), null, error)
  }

  // Elysia finds the path by searching for '/' from index 11 by default, assuming a host of at
  // least 4 characters: a proxy's `Host: api` would turn /v1/queues into a 404. Bun.serve here is
  // plain HTTP (TLS ends at a proxy), so searching from after "http://" is exact.
  const app = new Elysia({ handler: { standardHostname: false } })
    // Set for each request by onRequest below, before anything else runs.
    .decorate('context', undefined as unknown as RequestContext)
    .onRequest((c) => {
      const context = createRequestContext(c.request)
      c.context = context
      pending.add(context)
      if (context.method !== 'GET') return answerWithoutRoute(context)
    })
    .onError((c) => {
      // No context when the request broke before one was made.
      const context = c.context ?? createRequestContext(c.request)
      const error = toApiError(c.error, logger, context.id)
      return answer(context, errorResponse(error, context.id), c.code === 'NOT_FOUND' ? null : c.route, error)
    })
    // Runs on a route's response, and on onError's when a route had matched (then already answered).
    .mapResponse((c) => {
      const value = c.responseValue
      return answer(c.context, value instanceof Response ? value : jsonResponse(value), c.route)
    })

  return {
    route(path, handler) {
      app.get(path, (c) => handler(c.context))
    },
    mount(plugin) {
      app.use(plugin)
    },
    fetch: (request) => Promise.resolve(app.fetch(request)),
    active: () => pending.size,
  }
}
