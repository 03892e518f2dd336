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
import { hasDeletionLog } from '../tenant/migrations.ts'
import { mergeDeletions, type Tombstone } from './page-deletions.ts'

/**
 * GET /v1/tickets: one keyset page in (createdAt, id) order; `nextCursor` null exactly at the end.
 * The page's rows and its X-Changes-Token are read in one snapshot (docs/api.md#loading-incrementally).
 */
export function ticketsHandler(pool: TenantPool, tickets: TicketQueries, cursors: CursorCodec, changes: ChangesTokenCodec) {
  return (context: AdmittedContext): Response => {
    const { caller, params, id, request } = context
    const query = parseTicketQuery(params, 'page')
    // changedAfter first: a cursor is bound to it, so a wrong token would otherwise be reported as a wrong cursor.
    const since = query.changedAfter === null ? null : changes.decode(caller.organisationId, query.changedAfter)
    const after = query.cursor === null ? null : cursors.decode(caller.organisationId, query, query.cursor)
    const floor = changesFloor(changes, caller.organisationId, request)
    const { rows, hasMore, token, reached, deleted } = inSnapshot(pool, { organisationId: caller.organisationId, requestId: id }, (lease) => {
      const window = readChangeWindow(lease, changes, since, [after?.reached ?? null, floor])
      const page = tickets.readPage(lease, query, after, window.sinceVersion)
      checkServedRows(lease, 'tickets', page.rows)
      // With changedAfter on a file that records deletes, the page is the first `limit` entries
      // of its changed rows and its tombstones together (page-deletions.ts).
      if (window.sinceVersion === null || !hasDeletionLog(lease.schema().version)) return { ...page, token: window.token, reached: window.reached, deleted: null }
      const tombstones = tickets.readDeletions(lease, query, after, window.sinceVersion)
      const merged = mergeDeletions(page.rows, tombstones, query.limit)
      return { rows: merged.rows, hasMore: merged.hasMore || page.hasMore, deleted: merged.deleted, token: window.token, reached: window.reached }
    })
    const last: Tombstone | undefined = lastEntry(rows, deleted)
    const page: TicketPage = {
      items: rows,
      nextCursor: hasMore && last ? cursors.encode(caller.organisationId, query, { createdAt: last.createdAt, id: last.id, reached }) : null,
      ...(deleted ? { deleted: deleted.map((tombstone) => tombstone.id) } : {}),
    }
    // X-Changes-Token on a file with change tracking.
    return jsonResponse(page, token === null ? {} : { [CHANGES_TOKEN_HEADER]: token }, context)
  }
}

/** The page's last entry in (createdAt, id) order, a row or a tombstone: where its cursor points. */
function lastEntry(rows: readonly Tombstone[], deleted: readonly Tombstone[] | null): Tombstone | undefined {
  const row = rows[rows.length - 1]
  const tombstone = deleted?.[deleted.length - 1]
  if (!row || !tombstone) return row ?? tombstone
  return row.createdAt > tombstone.createdAt || (row.createdAt === tombstone.createdAt && row.id > tombstone.id) ? row : tombstone
}
