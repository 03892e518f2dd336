import { changesFloor, type ChangesTokenCodec } from '../changes/token.ts'
import { readChangeWindow } from '../changes/window.ts'
import { CHANGES_TOKEN_HEADER } from '../contract/vocabulary.ts'
import { jsonResponse, type AdmittedContext } from '../http/context.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { inSnapshot } from '../tenant/read.ts'
import { checkServedRows } from '../tenant/served-rows.ts'
import type { CursorCodec } from './cursor.ts'
import { parseTicketQuery } from './query.ts'
import type { TicketQueries } from './repository.ts'
import type { TicketPage } from '../contract/schemas.ts'

/**
 * GET /v1/tickets: one keyset page in (createdAt, id) order; `nextCursor` null exactly at the end.
 * The page's rows and its X-Changes-Token are read in one snapshot (docs/api.md#loading-incrementally).
 */
export function ticketsHandler(pool: TenantPool, tickets: TicketQueries, cursors: CursorCodec, changes: ChangesTokenCodec) {
  return ({ caller, params, id, request }: AdmittedContext): Response => {
    const query = parseTicketQuery(params, 'page')
    // changedAfter first: a cursor is bound to it, so a wrong token would otherwise be reported as a wrong cursor.
    const since = query.changedAfter === null ? null : changes.decode(caller.organisationId, query.changedAfter)
    const after = query.cursor === null ? null : cursors.decode(caller.organisationId, query, query.cursor)
    const floor = changesFloor(changes, caller.organisationId, request)
    const { rows, hasMore, token, reached } = inSnapshot(pool, { organisationId: caller.organisationId, requestId: id }, (lease) => {
      const window = readChangeWindow(lease, changes, since, [after?.reached ?? null, floor])
      const page = tickets.readPage(lease, query, after, window.sinceVersion)
      checkServedRows(lease, 'tickets', page.rows)
      return { ...page, token: window.token, reached: window.reached }
    })
    const last = rows[rows.length - 1]
    const page: TicketPage = {
      items: rows,
      nextCursor: hasMore && last ? cursors.encode(caller.organisationId, query, { createdAt: last.createdAt, id: last.id, reached }) : null,
    }
    // X-Changes-Token on a file with change tracking.
    return jsonResponse(page, token === null ? {} : { [CHANGES_TOKEN_HEADER]: token })
  }
}
