/**
 * The public contract's plain values: ticket states, the served fields, the query's bounds and
 * the error codes with their statuses. No imports: the client (browsers included) loads this
 * module at run time, while the TypeBox schemas in `schemas.ts` are imported for their types.
 * See docs/api.md for the rules these values take part in.
 */

export const TICKET_STATUSES = ['WAITING', 'CALLED', 'COMPLETED', 'CANCELED', 'SKIPPED', 'NO_SHOW'] as const
export type TicketStatus = (typeof TICKET_STATUSES)[number]

/** The 12 fields of a ticket, in the contract's order: JSON members and CSV columns alike. */
export const TICKET_FIELDS = [
  'id', 'number', 'queueId', 'locationId', 'status', 'createdAt', 'calledAt', 'completedAt',
  'cancelledAt', 'skippedAt', 'noShowAt', 'calledByDeviceSessionId',
] as const
export type TicketField = (typeof TICKET_FIELDS)[number]

/** The longest `from`..`to` range, both ticket operations. */
export const MAX_RANGE_DAYS = 90
export const MAX_RANGE_MS = MAX_RANGE_DAYS * 86_400_000
export const DEFAULT_PAGE_LIMIT = 100
export const MAX_PAGE_LIMIT = 500

/**
 * The filters of both ticket operations, declared once: the query parameter, the ticket field
 * (and tenant column) it selects on, its values when they are a closed set, and what the API
 * reference says of it. Every filter repeats (`name=a&name=b`, never split on commas) and
 * several filters combine with AND. The parser, the SQL, the cursor, the OpenAPI document and
 * the client's query type are derived from this table; adding a filter is a row here (its
 * field a column of the tenant schema, with an index of its own) and its tests.
 */
export const TICKET_FILTERS = [
  { parameter: 'queueId', field: 'queueId', index: 'tickets_queue_created', description: 'Repeatable (queueId=a&queueId=b); values are never split on commas. Ids that match nothing give an empty result.' },
  { parameter: 'locationId', field: 'locationId', index: 'tickets_location_created', description: 'Repeatable (locationId=a&locationId=b).' },
  { parameter: 'status', field: 'status', index: 'tickets_status_created', values: TICKET_STATUSES, description: 'Repeatable; each one of the six ticket states.' },
] as const satisfies readonly TicketFilterRow[]

interface TicketFilterRow {
  readonly parameter: string
  readonly field: TicketField
  /**
   * The tenant schema's index, (column, created_at, id), that a page filtered by this alone walks
   * (src/tenant/migrations.ts): a filter without one of its own would read the whole range.
   * test/unit/query-plan.test.ts checks the plan names it.
   */
  readonly index: string
  /** The only values accepted (400 otherwise); any non-empty string when absent. */
  readonly values?: readonly string[]
  readonly description: string
}

export type TicketFilter = (typeof TICKET_FILTERS)[number]
export type TicketFilterName = TicketFilter['parameter']
/** The values a filter takes: its closed set, or any string. */
export type TicketFilterValue<F extends TicketFilter> = F extends { values: readonly (infer V)[] } ? V : string

/** The parameters that may be given several times (`name=a&name=b`): the filters. */
export const REPEATABLE_PARAMETERS = TICKET_FILTERS.map((filter) => filter.parameter)

/** Every query parameter each ticket operation accepts; anything else is 400. */
export const TICKET_PARAMETERS = {
  page: ['from', 'to', ...REPEATABLE_PARAMETERS, 'changedAfter', 'cursor', 'limit'],
  export: ['from', 'to', ...REPEATABLE_PARAMETERS, 'changedAfter'],
} as const

/**
 * The response header of both ticket operations that holds a changes token (docs/api.md#loading-incrementally):
 * passed back as `changedAfter`, it selects the tickets inserted or changed since that response.
 */
export const CHANGES_TOKEN_HEADER = 'X-Changes-Token'
/**
 * A request header a loader may send with the X-Changes-Token it already holds: the answer must
 * come from data at least that fresh, or it is 503 `copy_behind` (a replica's lagging copy).
 */
export const CHANGES_FLOOR_HEADER = 'X-Changes-Floor'

/**
 * Why a `changedAfter` is refused (the 400's `reason`): a loader acts on it without reading the
 * message. Another organisation's token is a wrong token; another history means the range is
 * loaded again without `changedAfter`.
 */
export const CHANGED_AFTER_REFUSALS = ['malformed', 'altered', 'other_organisation', 'other_history', 'not_tracked'] as const
export type ChangedAfterRefusal = (typeof CHANGED_AFTER_REFUSALS)[number]

/** Every error code of the API and its HTTP status; the body's `error` is one of these. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  api_not_enabled: 402,
  not_found: 404,
  method_not_allowed: 405,
  headers_too_large: 431,
  rate_limited: 429,
  demo_quota_exceeded: 429,
  too_many_exports: 429,
  internal: 500,
  data_unavailable: 503,
  limits_unavailable: 503,
  copy_behind: 503,
} as const
export type ErrorCode = keyof typeof ERROR_STATUS
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[]
