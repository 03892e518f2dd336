import type { Gate } from '../admission/gate.ts'
import type { Handler, RequestContext } from './context.ts'

/**
 * Layers of the request path that the benchmark switches off one at a time, to account for what
 * each costs against the framework-free server (bench/scenarios/layers.ts). The service never
 * switches any off: each one serves a promise of the contract, the logs or the metrics.
 */
export const PIPELINE_LAYERS = ['access-log', 'metrics', 'gate', 'headers', 'context', 'query'] as const

export type PipelineLayer = (typeof PIPELINE_LAYERS)[number]

/** A gate that admits each Authorization once for real, then answers from that admission: no token look-up, no window. */
export function admittedOnce(gate: Gate): Gate {
  const admitted = new Map<string | null, ReturnType<Gate['admit']>>()
  return {
    admit(authorization, identified, claim) {
      let admission = admitted.get(authorization)
      if (!admission) admitted.set(authorization, (admission = gate.admit(authorization, undefined, claim)))
      return admission.then((answer) => {
        identified?.(answer.caller)
        return answer
      })
    },
    limitsReady: () => gate.limitsReady(),
  }
}

/** A handler that runs once for real, then answers every request with a copy of that answer's body and headers: no query, no JSON. */
export function answeredOnce<C extends RequestContext>(handler: Handler<C>): Handler<C> {
  let first: Promise<{ body: string; status: number; headers: Headers }> | undefined
  return async (context) => {
    first ??= Promise.resolve(handler(context)).then(async (response) => ({ body: await response.text(), status: response.status, headers: response.headers }))
    const { body, status, headers } = await first
    return new Response(body, { status, headers })
  }
}

/** The context without what the pipeline adds to the target and its parameters (which the baseline parses too): a fixed request id, no head-size count. */
export function bareRequestContext(request: Request): RequestContext {
  const url = request.url
  const start = url.indexOf('/', url.indexOf('://') + 3)
  const mark = url.indexOf('?', start)
  const search = mark === -1 ? '' : url.slice(mark)
  return {
    id: 'layers-off',
    startedAt: performance.now(),
    request,
    method: request.method,
    path: mark === -1 ? url.slice(start) : url.slice(start, mark),
    params: new URLSearchParams(search.slice(1)),
    search,
    responseHeaders: {},
  }
}
