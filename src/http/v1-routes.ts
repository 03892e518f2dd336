import type { Claim, Gate } from '../admission/gate.ts'
import type { ExportSlots } from '../export/export-slots.ts'
import type { AdmittedContext, Handler, RequestContext } from './context.ts'
import type { Route } from './route.ts'

export interface V1Handlers {
  gate: Gate
  queues: Handler<AdmittedContext>
  tickets: Handler<AdmittedContext>
  exportCsv: Handler<AdmittedContext>
  /** Bounds the exports running at once (429 too_many_exports). */
  exportSlots: ExportSlots
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
    { path: '/v1/exports/tickets.csv', handler: withExportSlot(handlers.gate, handlers.exportSlots, handlers.exportCsv) },
  ]
}

/**
 * The export route: a slot of the running exports is claimed once the token is accepted and
 * before the window counts (a refused export consumes nothing), and held until the export's
 * body ends, however it ends; an answer without a body (400, 503) gives it back at once.
 */
function withExportSlot(gate: Gate, slots: ExportSlots, handler: Handler<AdmittedContext>): Handler {
  return async (context) => {
    let giveBack = () => {}
    const claim: Claim = async (caller) => (giveBack = await slots.claim(caller.tokenId))
    const admitted = await admit(gate, context, claim)
    try {
      const response = await handler(admitted)
      if (context.bodyEnded) void context.bodyEnded.finally(giveBack)
      else giveBack()
      return response
    } catch (error) {
      giveBack()
      throw error
    }
  }
}

/** Runs the gate; the caller is on the context as soon as the token is recognised, so that even a 402 or 429 is logged with who it was. */
async function admit(gate: Gate, context: RequestContext, claim?: Claim): Promise<AdmittedContext> {
  const { caller, headers } = await gate.admit(
    context.request.headers.get('authorization'),
    (identified) => {
      context.caller = identified
    },
    claim,
  )
  Object.assign(context.responseHeaders, headers)
  return Object.assign(context, { caller })
}
