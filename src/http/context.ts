import type { Caller } from '../admission/gate.ts'
import { containsTokenShape } from '../auth/token-shape.ts'
import { requestTarget } from './request-target.ts'
import { everyResponseHeaders } from './response-headers.ts'

/**
 * Everything a handler knows about the request it answers, made once when the request arrives
 * and passed to every step of the pipeline (src/http/pipeline.ts): no step keeps request state
 * anywhere else.
 */
export interface RequestContext {
  /**
   * The client's X-Request-Id when short and plain and not token-shaped, otherwise a fresh UUID;
   * in every response and log line.
   */
  readonly id: string
  /** performance.now() when the request arrived. */
  readonly startedAt: number
  readonly request: Request
  readonly method: string
  /** The path of the request target, as Bun passes it on (see createRequestContext). */
  readonly path: string
  /** The raw query string's parameters, as sent: the contract's own rules read them (tickets/query.ts). */
  readonly params: URLSearchParams
  /** The query string, with its '?' (empty when none): what the access log shows. */
  readonly search: string
  /** Who is calling, once the token was recognised (even when a later check refuses the request). */
  caller?: Caller
  /** Headers every response to this request gets, whatever its status (the rate-limit headers). */
  readonly responseHeaders: Record<string, string>
  /**
   * Set by a handler whose response body goes on streaming after it is answered (a CSV
   * export): settles when the body ends, however it ends. Until then the request counts as in
   * flight (shutdown waits for it); an observer that needs the time to the last byte waits for it.
   */
  bodyEnded?: Promise<void>
  /** The response, when it was made with every header already (jsonResponse given the context). */
  complete?: Response
  /** Only the benchmark's accounting sets it (http/layers-off.ts): no header beyond the handler's own. */
  plainHeaders?: true
}

/** A context whose token passed every check of the gate: what a /v1 handler receives. */
export interface AdmittedContext extends RequestContext {
  readonly caller: Caller
}

/** The one shape of a handler: a context in, a Response out (or thrown: see http/error-response.ts). */
export type Handler<Context extends RequestContext = RequestContext> = (context: Context) => Response | Promise<Response>

/** A client's X-Request-Id is echoed only when short and plain; otherwise a fresh one is made. */
const PLAIN_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

/**
 * The client's request id if it may be echoed and logged: short, plain, and not shaped like a
 * token (a client that puts its token there must not find it in our logs or responses).
 */
function acceptedRequestId(given: string | null): string | undefined {
  return given !== null && PLAIN_REQUEST_ID.test(given) && !containsTokenShape(given) ? given : undefined
}

/**
 * The context of a request, whatever its Host: the path and query are the request target's
 * (http/request-target.ts), never a URL built on the Host, and the path is kept as Bun gives it,
 * not parsed again, so that routing and the log see one spelling.
 */
export function createRequestContext(request: Request): RequestContext {
  const target = requestTarget(request.url)
  const mark = target.indexOf('?')
  const search = mark === -1 ? '' : target.slice(mark)
  return {
    id: acceptedRequestId(request.headers.get('x-request-id')) ?? crypto.randomUUID(),
    startedAt: performance.now(),
    request,
    method: request.method,
    path: mark === -1 ? target : target.slice(0, mark),
    // From the raw text after '?', as sent: the parameters a client wrote, not a re-encoding of them.
    params: new URLSearchParams(search.slice(1)),
    search: search === '?' ? '' : search,
    responseHeaders: {},
  }
}

/**
 * A JSON response with the content type the API has always sent. Given the request's `context`,
 * it is made whole at once: the context's headers (those a handler's own do not replace) and the
 * headers every response gets go in with it, and the pipeline's `finish` has nothing to add.
 */
export function jsonResponse(body: unknown, headers: Record<string, string> = {}, context?: RequestContext): Response {
  const own = { 'Content-Type': 'application/json', ...headers }
  if (!context) return new Response(JSON.stringify(body), { headers: own })
  // A response made with a context is an API answer: private to one organisation, never cached.
  const all = context.plainHeaders ? own : { ...context.responseHeaders, ...own, ...everyResponseHeaders(context.id, true) }
  const response = new Response(JSON.stringify(body), { headers: all })
  context.complete = response
  return response
}
