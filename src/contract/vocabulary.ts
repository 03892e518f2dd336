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

/** Every query parameter each ticket operation accepts; anything else is 400. */
export const TICKET_PARAMETERS = {
  page: ['from', 'to', 'queueId', 'locationId', 'status', 'changedAfter', 'cursor', 'limit'],
  export: ['from', 'to', 'queueId', 'locationId', 'status', 'changedAfter'],
} as const
/** The parameters that may be given several times (`name=a&name=b`). */
export const REPEATABLE_PARAMETERS = ['queueId', 'locationId', 'status'] as const

/**
 * The response header of both ticket operations that holds a changes token (docs/api.md#loading-incrementally):
 * passed back as `changedAfter`, it selects the tickets inserted or changed since that response.
 */
export const CHANGES_TOKEN_HEADER = 'X-Changes-Token'

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
