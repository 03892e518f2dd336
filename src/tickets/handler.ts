import type { Caller } from '../admission/caller.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { withTenant } from '../tenant/read.ts'
import type { CursorCodec } from './cursor.ts'
import { parseTicketQuery } from './query.ts'
import { readTicketPage, type TicketRow } from './repository.ts'

export interface TicketPage {
  items: TicketRow[]
  nextCursor: string | null
}

/** GET /v1/tickets: one keyset page in (createdAt, id) order; `nextCursor` null exactly at the end. */
export function ticketsHandler(pool: TenantPool, cursors: CursorCodec) {
  return (caller: Caller, params: URLSearchParams): TicketPage => {
    const query = parseTicketQuery(params, 'page')
    const after = query.cursor === null ? null : cursors.decode(caller.organisationId, query, query.cursor)
    const { rows, hasMore } = withTenant(pool, caller.organisationId, (lease) => readTicketPage(lease, query, after))
    const last = rows[rows.length - 1]
    return {
      items: rows,
      nextCursor: hasMore && last ? cursors.encode(caller.organisationId, query, { createdAt: last.createdAt, id: last.id }) : null,
    }
  }
}
