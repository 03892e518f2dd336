import { Elysia, type AnyElysia } from 'elysia'
import type { Logger } from '../logger.ts'
import { ApiError } from '../errors/api-error.ts'
import { createRequestContext, jsonResponse, type Handler, type RequestContext } from './context.ts'
import { errorResponse, notFound, toApiError } from './error-response.ts'
import { decorateResponse, preflightResponse } from './response-headers.ts'
import { headTooLarge, REQUEST_HEAD_LIMIT_BYTES, requestHeadBytes } from './request-head.ts'
import { isUsableUrl, requestTarget, STAND_IN_ORIGIN } from './request-target.ts'

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
 * 0. `fetch` makes the RequestContext from the request target, whatever the Host
 *    (http/request-target.ts); a request head over REQUEST_HEAD_LIMIT_BYTES is answered 431 here.
 *    HEAD is routed as GET: it runs the same route and checks and counts alike, and the HTTP
 *    server sends the same status and headers without the body.
 * 1. onRequest answers at once a method other than GET or HEAD, which needs no route: the CORS
 *    preflight, 405 on a known path, 404 on an unknown one. None needs a token, none counts.
 * 2. The route's handler gets the context and returns a Response. Paths match exactly: a
 *    trailing slash is another, unknown, path.
 * 3. Anything thrown, Elysia's own errors (no route matched, validation) included, becomes the
 *    one error body in onError, through http/error-response.ts; should Elysia itself fail,
 *    `fetch` still answers with that body, so no request leaves without a JSON answer.
 * 4. `answer`, reached from each of these, adds the headers every response gets and tells
 *    the observers (the access log first). It runs once per request.
 */
export function createPipeline(options: { logger: Logger; observers: readonly RequestObserver[] }): Pipeline {
  const { logger, observers } = options
  const pending = new Set<RequestContext>()
  // The context of each request handed to Elysia, made by `fetch` before it; looked up by onRequest.
  const contexts = new WeakMap<Request, RequestContext>()
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

  /** Answers a request that is neither GET nor HEAD, without routing: the preflight, 404 or 405. */
  function answerWithoutRoute(context: RequestContext): Response {
    knownPaths ??= new Set(app.routes.map((route) => route.path))
    const known = knownPaths.has(context.path)
    if (context.method === 'OPTIONS' && known) return answer(context, preflightResponse(), null)
    const error = known ? new ApiError('method_not_allowed', `Only GET and HEAD are allowed on ${context.path}.`, {}, { Allow: ALLOWED_METHODS }) : notFound()
    return answer(context, errorResponse(error, context.id), null, error)
  }

  // Elysia finds the path by searching for '/' from index 11 by default, assuming a host of at
  // least 4 characters: a proxy's `Host: api` would turn /v1/queues into a 404. The request it
  // gets always has an absolute URL (see `fetch`), so searching from after "http://" is exact.
  // strictPath: `/v1/queues/` is not `/v1/queues` (Elysia would otherwise serve both).
  const app = new Elysia({ strictPath: true, handler: { standardHostname: false } })
    // Set for each request by onRequest below, before anything else runs.
    .decorate('context', undefined as unknown as RequestContext)
    .onRequest((c) => {
      const context = contextOf(c.request)
      c.context = context
      if (context.method !== 'GET' && context.method !== 'HEAD') return answerWithoutRoute(context)
    })
    .onError((c) => {
      // No context when the request broke before one was made.
      const context = c.context ?? contextOf(c.request)
      const error = toApiError(c.error, logger, context.id)
      return answer(context, errorResponse(error, context.id), c.code === 'NOT_FOUND' ? null : c.route, error)
    })
    // Runs on a route's response, and on onError's when a route had matched (then already answered).
    .mapResponse((c) => {
      const value = c.responseValue
      return answer(c.context, value instanceof Response ? value : jsonResponse(value), c.route)
    })

  /**
   * The context `fetch` made for the request it handed Elysia. Every request enters through
   * `fetch`, so a missing one is a bug of ours: it is said in the log, not papered over, and the
   * request is still answered with a context of its own.
   */
  function contextOf(request: Request): RequestContext {
    const known = contexts.get(request)
    if (known) return known
    const context = track(createRequestContext(request))
    logger.error('pipeline_untracked_request', { requestId: context.id, path: context.path })
    return context
  }

  function track(context: RequestContext): RequestContext {
    pending.add(context)
    return context
  }

  async function fetch(request: Request): Promise<Response> {
    const context = track(createRequestContext(request))
    if (requestHeadBytes(request, context) > REQUEST_HEAD_LIMIT_BYTES) {
      const error = headTooLarge()
      return answer(context, errorResponse(error, context.id), null, error)
    }
    try {
      const routed = routable(request, context)
      contexts.set(routed, context)
      const response = await app.fetch(routed)
      // Every way through Elysia reaches `answer`; should one ever not, it is answered here, so
      // that no request goes unlogged or stays counted in flight.
      return context.response ? response : answer(context, response, null)
    } catch (error) {
      // Only a fault of the framework or of a hook lands here: still the one JSON body, an access line, nothing left in flight.
      const apiError = toApiError(error, logger, context.id)
      return answer(context, errorResponse(apiError, context.id), null, apiError)
    }
  }

  return {
    route(path, handler) {
      app.get(path, (c) => handler(c.context))
    },
    mount(plugin) {
      app.use(plugin)
    },
    fetch,
    active: () => pending.size,
  }
}

/** The methods every route answers (`Allow` of a 405). */
const ALLOWED_METHODS = 'GET, HEAD'

/**
 * The request the router sees: the same request, unless its URL is not the absolute URL that
 * Elysia reads its path from (a missing or malformed Host, http/request-target.ts), or it is a
 * HEAD, which is routed as the GET it mirrors (RFC 9110: HEAD wherever GET). The context keeps
 * the real method; the headers, and so the token, are the same.
 */
function routable(request: Request, context: RequestContext): Request {
  const method = context.method === 'HEAD' ? 'GET' : context.method
  if (method === request.method && isUsableUrl(request.url)) return request
  // The body is left behind: no route reads one, and a GET may not carry one.
  return new Request(STAND_IN_ORIGIN + requestTarget(request.url), { method, headers: request.headers, signal: request.signal })
}
