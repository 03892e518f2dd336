import { Elysia } from 'elysia'
import type { Caller } from '../admission/caller.ts'
import type { Gate } from '../admission/gate.ts'
import { requestInfo } from './request-info.ts'

export interface V1Handlers {
  gate: Gate
  queues: (caller: Caller, params: URLSearchParams) => unknown
  tickets: (caller: Caller, params: URLSearchParams) => { body: unknown; headers: Record<string, string> }
  exportCsv: (caller: Caller, params: URLSearchParams, request: Request, requestId: string) => Response
}

/** The raw query string's parameters; the framework's own query parsing is not used (see tickets/query.ts). */
function searchParams(url: string): URLSearchParams {
  const mark = url.indexOf('?')
  return new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1))
}

/**
 * The three operations of the public contract. The gate runs first for each of them
 * (token → feature → minute window → demo quota); the query is looked at only after it.
 */
export function v1Routes(handlers: V1Handlers) {
  return new Elysia({ name: 'v1' })
    .derive(async ({ request, set }) => {
      const info = requestInfo(request)
      const { caller, headers } = await handlers.gate.admit(request.headers.get('authorization'), (identified) => {
        info.organisationId = identified.organisationId
        info.tokenId = identified.tokenId
      })
      Object.assign(set.headers, headers)
      return { caller }
    })
    .get('/v1/queues', ({ caller, request }) => handlers.queues(caller, searchParams(request.url)))
    .get('/v1/tickets', ({ caller, request, set }) => {
      const { body, headers } = handlers.tickets(caller, searchParams(request.url))
      Object.assign(set.headers, headers)
      return body
    })
    .get('/v1/exports/tickets.csv', ({ caller, request }) =>
      handlers.exportCsv(caller, searchParams(request.url), request, requestInfo(request).id),
    )
}
