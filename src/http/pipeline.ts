import type { Logger } from '../logger.ts'
import type { Admission, Caller, Claim, Gate } from '../admission/gate.ts'
import type { ExportSlots } from '../limits/export-slots.ts'
import { ApiError } from '../errors/api-error.ts'
import { createRequestContext, type AdmittedContext, type Handler, type RequestContext } from './context.ts'
import { errorResponse, notFound, toApiError } from './error-response.ts'
import { decorateResponse, preflightResponse } from './response-headers.ts'
import { headTooLarge, REQUEST_HEAD_LIMIT_BYTES, requestHeadBytes } from './request-head.ts'
import { bareRequestContext, type PipelineLayer } from './layers-off.ts'

/** A route outside /v1 (the pages, health): answered without a token. */
export interface OpenRoute {
  path: string
  handler: Handler
}

/**
 * A route of the public contract: the gate admits the request first (token, feature, minute
 * window, demo quota), then the handler gets the caller on its context. `exportSlots`: the
 * route holds one of the exports running at once from before the window counts until its body ends.
 */
export interface V1Route {
  path: string
  admitted: Handler<AdmittedContext>
  exportSlots?: ExportSlots
}

export type Route = OpenRoute | V1Route

/** What observers of the pipeline are told, once per request, when its response is ready. */
export interface AnsweredRequest {
  context: RequestContext
  response: Response
  /** The route that answered (its path as registered); null when none did (404, 405, preflight, 431). */
  route: string | null
  /** Milliseconds from arrival to the response being ready; for a streamed export, `context.bodyEnded` settles at its last byte. */
  durationMs: number
  /** The error the response was made from, when it is an error answer. */
  error?: ApiError
  /**
   * True when the target named a route's path in another spelling (dot segments, backslashes):
   * Bun gives the application only the resolved path, so the log says it was not sent so.
   */
  pathResolved?: true
}

/**
 * Told about every answered request, in the order given, after the response is complete but
 * before it is sent. The access log is one (http/access-log.ts); metrics can be another. An
 * observer that throws is logged and does not change the response.
 */
export type RequestObserver = (answered: AnsweredRequest) => void

export interface Pipeline {
  /** Answers one request, routed by its path (in-process callers and tests). */
  fetch(request: Request): Promise<Response>
  /** Bun.serve's `routes`: each path as sent, byte for byte, to its route; everything else goes to `unrouted`. */
  readonly serveRoutes: Record<string, (request: Request) => Promise<Response>>
  /** Bun.serve's `fetch`: a request whose target is none of the routes' paths as sent (404). */
  unrouted(request: Request): Promise<Response>
  /** Requests being answered right now, and answered ones whose body still streams (exports). */
  active(): number
}

/** The methods every route answers (`Allow` of a 405). */
const ALLOWED_METHODS = 'GET, HEAD'

/**
 * The one request pipeline (docs/architecture.md#the-path-of-a-request), read top to bottom in
 * `answer`: the context is made once, each step gets it, anything a step throws becomes the one
 * error body in one place, and `finish` completes every response once.
 *
 * Routing is exact on the target as sent: Bun.serve matches its `routes` on the raw request
 * target, while `request.url` has dot segments and backslashes already resolved, so a target
 * such as `/v1/./queues` reaches no route and is answered 404, never the operation it resolves to.
 */
export function createPipeline(options: {
  logger: Logger
  observers: readonly RequestObserver[]
  gate: Gate
  routes: readonly Route[]
  /** Only the benchmark's accounting switches any off (http/layers-off.ts). @default none */
  layersOff?: ReadonlySet<PipelineLayer>
}): Pipeline {
  const { logger, observers, gate } = options
  const bareContext = options.layersOff?.has('context') ?? false
  const bareHeaders = options.layersOff?.has('headers') ?? false
  const pending = new Set<RequestContext>()
  const byPath = new Map<string, Route>(options.routes.map((route) => [route.path, route]))

  async function answer(request: Request, routeOf: (context: RequestContext) => Route | undefined): Promise<Response> {
    const context = bareContext ? bareRequestContext(request) : createRequestContext(request)
    if (bareHeaders) context.plainHeaders = true
    pending.add(context)
    const route = routeOf(context)
    const tooLarge = !bareContext && requestHeadBytes(request, context) > REQUEST_HEAD_LIMIT_BYTES
    if (!route || tooLarge || (context.method !== 'GET' && context.method !== 'HEAD')) return answerUnrouted(context, route, tooLarge)
    try {
      return finish(context, await respond(context, route), route.path)
    } catch (thrown) {
      const error = toApiError(thrown, logger, context.id)
      return finish(context, errorResponse(error, context.id), route.path, error)
    }
  }

  /**
   * A request no route answers, before any token is read, counting nowhere: a head over the
   * limit (431), an unknown path (404), the CORS preflight, or a method other than GET and HEAD
   * (405). HEAD runs the GET route; the HTTP server sends its status and headers without the body.
   */
  function answerUnrouted(context: RequestContext, route: Route | undefined, tooLarge: boolean): Response {
    if (!tooLarge && route && context.method === 'OPTIONS') return finish(context, preflightResponse(), null)
    const error = tooLarge
      ? headTooLarge()
      : !route
        ? notFound()
        : new ApiError('method_not_allowed', `Only GET and HEAD are allowed on ${context.path}.`, {}, { Allow: ALLOWED_METHODS })
    // No route, yet a route's path: only Bun.serve's fallback gets one, for a target it resolved.
    return finish(context, errorResponse(error, context.id), null, error, !route && byPath.has(context.path) ? true : undefined)
  }

  /** The route's steps: the gate first on /v1, then the handler. */
  async function respond(context: RequestContext, route: Route): Promise<Response> {
    if ('handler' in route) return route.handler(context)
    return route.exportSlots ? admitWithExportSlot(context, route, route.exportSlots) : refundingOwnFailing(context, await admit(context), route)
  }

  /**
   * The handler, after admission. An answer that is the server's own failing (503 copy_behind:
   * this replica's copy has not reached the point the client already holds) is taken back out
   * of the window and the demo quota, and shows the limits without it.
   */
  async function refundingOwnFailing(context: RequestContext, admitted: AdmittedContext & { refund: Admission['refund'] }, route: V1Route): Promise<Response> {
    try {
      return await route.admitted(admitted)
    } catch (error) {
      if (error instanceof ApiError && error.errorCode === 'copy_behind') Object.assign(context.responseHeaders, await admitted.refund())
      throw error
    }
  }

  /**
   * The gate (admission/gate.ts); the caller goes on the context as soon as the token is
   * recognised, so that even a 402 or 429 is logged with who it was, and the rate-limit headers
   * go on every response to the request, whatever its status.
   */
  async function admit(context: RequestContext, claim?: Claim): Promise<AdmittedContext & { refund: Admission['refund'] }> {
    const identified = (caller: Caller) => {
      context.caller = caller
    }
    const { caller, headers, refund } = await gate.admit(context.request.headers.get('authorization'), identified, claim)
    Object.assign(context.responseHeaders, headers)
    return Object.assign(context, { caller, refund })
  }

  /**
   * An export's slot is claimed once the token is accepted and before the window counts (a
   * refused export consumes nothing), and held until the body ends, however it ends; an answer
   * without a body (400, 503) gives it back at once.
   */
  async function admitWithExportSlot(context: RequestContext, route: V1Route, slots: ExportSlots): Promise<Response> {
    let giveBack = () => {}
    const admitted = await admit(context, async (caller) => (giveBack = await slots.claim(caller.tokenId)))
    try {
      const response = await refundingOwnFailing(context, admitted, route)
      if (context.bodyEnded) void context.bodyEnded.finally(giveBack)
      else giveBack()
      return response
    } catch (error) {
      giveBack()
      throw error
    }
  }

  /** Where every request is answered, once: the headers every response gets, then the observers, the access log first. */
  function finish(context: RequestContext, response: Response, route: string | null, error?: ApiError, pathResolved?: true): Response {
    if (context.bodyEnded) void context.bodyEnded.finally(() => pending.delete(context))
    else pending.delete(context)
    if (context.complete !== response && !bareHeaders) {
      for (const [name, value] of Object.entries(context.responseHeaders)) {
        if (!response.headers.has(name)) response.headers.set(name, value)
      }
      decorateResponse(response, context.id, { privateData: context.path.startsWith('/v1/') })
    }
    const answered: AnsweredRequest = { context, response, route, durationMs: Math.round((performance.now() - context.startedAt) * 100) / 100, error, pathResolved }
    for (const observe of observers) {
      try {
        observe(answered)
      } catch (thrown) {
        logger.error('observer_failed', { requestId: context.id, error: String(thrown) })
      }
    }
    return response
  }

  const serveRoutes: Record<string, (request: Request) => Promise<Response>> = {}
  for (const route of options.routes) serveRoutes[route.path] = (request) => answer(request, () => route)

  return {
    fetch: (request) => answer(request, (context) => byPath.get(context.path)),
    serveRoutes,
    unrouted: (request) => answer(request, () => undefined),
    active: () => pending.size,
  }
}
