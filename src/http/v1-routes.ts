import type { Gate } from '../admission/gate.ts'
import type { AdmittedContext, Handler, RequestContext } from './context.ts'
import type { Route } from './route.ts'

export interface V1Handlers {
  gate: Gate
  queues: Handler<AdmittedContext>
  tickets: Handler<AdmittedContext>
  exportCsv: Handler<AdmittedContext>
}

/**
 * The three operations of the public contract. The gate runs first for each of them
 * (token → feature → minute window → demo quota); the query is looked at only after it, by the handler.
 */
export function v1Routes(handlers: V1Handlers): Route[] {
  const admitted = (handler: Handler<AdmittedContext>): Handler => async (context) => handler(await admit(handlers.gate, context))
  return [
    { path: '/v1/queues', handler: admitted(handlers.queues) },
    { path: '/v1/tickets', handler: admitted(handlers.tickets) },
    { path: '/v1/exports/tickets.csv', handler: admitted(handlers.exportCsv) },
  ]
}

/** Runs the gate; the caller is on the context as soon as the token is recognised, so that even a 402 or 429 is logged with who it was. */
async function admit(gate: Gate, context: RequestContext): Promise<AdmittedContext> {
  const { caller, headers } = await gate.admit(context.request.headers.get('authorization'), (identified) => {
    context.caller = identified
  })
  Object.assign(context.responseHeaders, headers)
  return Object.assign(context, { caller })
}
