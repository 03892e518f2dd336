import { and, asc, eq, gt, gte, lt, sql, type SQL } from 'drizzle-orm'
import { QueryBuilder, type SQLiteColumn } from 'drizzle-orm/sqlite-core'
import { ticketChanges, ticketDeletions, tickets } from '../tenant/schema.ts'
import type { TenantLease } from '../tenant/lease.ts'
import type { ParsedTicketQuery } from './query.ts'
import type { CursorPosition } from './cursor.ts'
import type { Ticket } from '../contract/schemas.ts'
import { TICKET_FILTERS, type TicketField, type TicketFilterName } from '../contract/vocabulary.ts'

/**
 * The columns of a served ticket, aliased to the contract's names, in TICKET_FIELDS order (the
 * `satisfies` keeps the two in step), from `tickets` or from the change log's copy of them. The
 * personal columns are never read.
 */
function servedColumns(table: typeof tickets | typeof ticketChanges) {
  return {
    id: sql<string>`${table.id}`.as('id'),
    number: sql<number>`${table.number}`.as('number'),
    queueId: sql<string>`${table.queueId}`.as('queueId'),
    locationId: sql<string>`${table.locationId}`.as('locationId'),
    status: sql<Ticket['status']>`${table.status}`.as('status'),
    createdAt: sql<string>`${table.createdAt}`.as('createdAt'),
    calledAt: sql<string | null>`${table.calledAt}`.as('calledAt'),
    completedAt: sql<string | null>`${table.completedAt}`.as('completedAt'),
    cancelledAt: sql<string | null>`${table.cancelledAt}`.as('cancelledAt'),
    skippedAt: sql<string | null>`${table.skippedAt}`.as('skippedAt'),
    noShowAt: sql<string | null>`${table.noShowAt}`.as('noShowAt'),
    calledByDeviceSessionId: sql<string | null>`${table.calledByDeviceSessionId}`.as('calledByDeviceSessionId'),
  } satisfies Record<TicketField, unknown>
}

type ParamName = 'from' | 'to' | TicketFilterName | 'afterCreatedAt' | 'afterId' | 'since' | 'limit'

/** SQL of one query shape and the order in which its parameters bind. */
interface CompiledQuery {
  sql: string
  params: ParamName[]
}

/**
 * A filter on one column: absent, one value (`=`, which lets the planner walk a
 * (column, created_at, id) index in order), or several (a JSON array probed with json_each, so
 * that the SQL text, and with it the prepared statement, does not depend on how many values).
 */
function filterShape(values: readonly string[]): 'none' | 'one' | 'many' {
  return values.length === 0 ? 'none' : values.length === 1 ? 'one' : 'many'
}

function filterCondition(column: SQLiteColumn, name: ParamName, shape: 'none' | 'one' | 'many'): SQL | undefined {
  if (shape === 'none') return undefined
  if (shape === 'one') return eq(column, sql.placeholder(name))
  // The unary `+` keeps the planner off a (column, created_at, id) index here: walked for several
  // values, that index yields rows out of order and needs a temporary B-tree sort of the range.
  return sql`+${column} IN (SELECT value FROM json_each(${sql.placeholder(name)}))`
}

export interface QueryShape {
  /** Rows after a cursor position instead of from `from`. */
  afterCursor: boolean
  /** A page (bound by `limit`) rather than the whole range (the CSV export). */
  withLimit: boolean
  /**
   * Only the tickets inserted or changed after a version of the change log (`changedAfter`).
   * @default false
   */
  changedAfter?: boolean
  /**
   * The tombstones of the deletion log after the version (`deleted` of a changedAfter page):
   * their id and createdAt only, in the same order, selected by the same range and filters.
   * @default false
   */
  deletions?: boolean
}

/**
 * Builds the keyset query: rows of [from, to) matching the filters, after the cursor position,
 * in (created_at, id) order. Its text depends only on the query's shape (see `shapeKey`).
 */
export function compileTicketQuery(query: ParsedTicketQuery, { afterCursor, withLimit, changedAfter = false, deletions = false }: QueryShape): CompiledQuery {
  const shapes = filterShapes(query)

  // changedAfter reads the change log alone (each changed ticket's served columns, kept equal by
  // version 3's triggers): its rows after the version are one stretch of its primary key, a few
  // thousand for a daily load where the range may hold a million.
  const table = deletions ? ticketDeletions : changedAfter ? ticketChanges : tickets
  const conditions = [
    deletions ? gt(ticketDeletions.version, sql.placeholder('since')) : changedAfter ? gt(ticketChanges.version, sql.placeholder('since')) : undefined,
    // After a cursor its position (signed for this query, never before `from`) is the only lower
    // bound: given `created_at >= from` too, SQLite seeks by that, so page N would cost N pages.
    afterCursor
      ? sql`(${table.createdAt}, ${table.id}) > (${sql.placeholder('afterCreatedAt')}, ${sql.placeholder('afterId')})`
      : gte(table.createdAt, sql.placeholder('from')),
    lt(table.createdAt, sql.placeholder('to')),
    // Each filter's field is a column of both tables, of the same name.
    ...TICKET_FILTERS.map((filter, i) => filterCondition(table[filter.field], filter.parameter, shapes[i]!)),
  ]
  const select = new QueryBuilder()
    .select(deletions ? { id: sql<string>`${table.id}`.as('id'), createdAt: sql<string>`${table.createdAt}`.as('createdAt') } : servedColumns(table as typeof tickets | typeof ticketChanges))
    .from(table)
    .where(and(...conditions))
    .orderBy(asc(table.createdAt), asc(table.id))
  const built = withLimit ? select.limit(sql.placeholder('limit')).toSQL() : select.toSQL()
  return {
    sql: built.sql,
    params: built.params.map((param) => (param as { name: ParamName }).name),
  }
}

/** Each filter's shape, in TICKET_FILTERS order. */
function filterShapes(query: ParsedTicketQuery) {
  return TICKET_FILTERS.map((filter) => filterShape(query.filters[filter.parameter]))
}

/** What the SQL of `compileTicketQuery` depends on. */
function shapeKey(query: ParsedTicketQuery, { afterCursor, withLimit, changedAfter = false, deletions = false }: QueryShape): string {
  return `${filterShapes(query).join(',')}|${afterCursor}|${withLimit}|${changedAfter}|${deletions}`
}

/** What a query binds besides its own values: the cursor position, the page size, the changedAfter version. */
export interface Bindings {
  after?: CursorPosition | null
  limit?: number
  sinceVersion?: number | null
}

/** The values to bind, in the compiled order. */
export function bindValues(compiledQuery: CompiledQuery, query: ParsedTicketQuery, { after = null, limit, sinceVersion = null }: Bindings = {}): (string | number)[] {
  const list = (values: readonly string[]) => (values.length === 1 ? values[0]! : JSON.stringify(values))
  const filters = Object.fromEntries(TICKET_FILTERS.map((filter) => [filter.parameter, list(query.filters[filter.parameter])]))
  const values: Record<ParamName, string | number | undefined> = {
    ...(filters as Record<TicketFilterName, string>),
    from: query.from,
    to: query.to,
    afterCreatedAt: after?.createdAt,
    afterId: after?.id,
    since: sinceVersion ?? undefined,
    limit,
  }
  return compiledQuery.params.map((name) => values[name]!)
}

/**
 * The ticket reads of the API, each query shape built once (by drizzle, which costs more than
 * the short page query it builds) and kept for the life of the app that made this.
 */
export class TicketQueries {
  private readonly compiled = new Map<string, CompiledQuery>()

  /**
   * One page: up to `limit` rows after `after`, and whether another matching row exists; with a
   * `sinceVersion`, only tickets inserted or changed after that version of the change log.
   */
  readPage(lease: TenantLease, query: ParsedTicketQuery, after: CursorPosition | null, sinceVersion: number | null = null): { rows: Ticket[]; hasMore: boolean } {
    const compiledQuery = this.compile(query, { afterCursor: after !== null, withLimit: true, changedAfter: sinceVersion !== null })
    const statement = lease.statement(compiledQuery.sql)
    // One extra row tells whether a next page exists without a second query.
    const rows = statement.all(...bindValues(compiledQuery, query, { after, limit: query.limit + 1, sinceVersion })) as Ticket[]
    const hasMore = rows.length > query.limit
    if (hasMore) rows.length = query.limit
    return { rows, hasMore }
  }

  /**
   * The tombstones of the deletion log after `sinceVersion` in the page's range: up to `limit`
   * + 1 of them after `after`, in (createdAt, id) order, for merging with the page's rows.
   */
  readDeletions(lease: TenantLease, query: ParsedTicketQuery, after: CursorPosition | null, sinceVersion: number): { id: string; createdAt: string }[] {
    const compiledQuery = this.compile(query, { afterCursor: after !== null, withLimit: true, deletions: true })
    return lease.statement(compiledQuery.sql).all(...bindValues(compiledQuery, query, { after, limit: query.limit + 1, sinceVersion })) as { id: string; createdAt: string }[]
  }

  /** The SQL and values of a streamed export: the whole range, no cursor, no limit. */
  exportQuery(query: ParsedTicketQuery, sinceVersion: number | null = null): { sql: string; values: (string | number)[] } {
    const compiledQuery = this.compile(query, { afterCursor: false, withLimit: false, changedAfter: sinceVersion !== null })
    return { sql: compiledQuery.sql, values: bindValues(compiledQuery, query, { sinceVersion }) }
  }

  private compile(query: ParsedTicketQuery, shape: QueryShape): CompiledQuery {
    const key = shapeKey(query, shape)
    let result = this.compiled.get(key)
    if (!result) {
      result = compileTicketQuery(query, shape)
      this.compiled.set(key, result)
    }
    return result
  }
}
