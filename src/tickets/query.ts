import { invalidParam } from '../errors/api-error.ts'
import {
  DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, MAX_RANGE_DAYS, MAX_RANGE_MS, TICKET_FILTERS, TICKET_PARAMETERS,
  type TicketFilter, type TicketFilterValue,
} from '../contract/vocabulary.ts'
import { canonicalInstant, parseInstant } from '../contract/instant.ts'

/**
 * The query of GET /v1/tickets and GET /v1/exports/tickets.csv (docs/api.md#query-parameters), parsed from
 * the raw URLSearchParams, since the contract forbids what a generic query parser does (split
 * values on commas, keep the last of a repeated scalar, drop unknown keys). Pure: no HTTP, no
 * database; every failure is a 400 that names the parameter.
 */

/** Guards against pathological requests; a real filter names a few dozen ids at most. */
export const MAX_FILTER_VALUES = 1000

/** The query as the server uses it, checked and normalised (the client's `TicketQuery` is what a caller writes). */
export interface ParsedTicketQuery {
  fromMs: number
  toMs: number
  /** Canonical 24-character UTC forms, compared as text with the stored timestamps. */
  from: string
  to: string
  /** Each filter's values (contract/vocabulary.ts TICKET_FILTERS), sorted, without duplicates: the same set in any order is the same query; empty when not given. */
  filters: TicketFilterValues
  limit: number
  /** Raw cursor as given; verified against the query by the cursor codec. */
  cursor: string | null
  /** Raw changes token as given; verified by the changes token codec (src/changes/token.ts). */
  changedAfter: string | null
}

/** The values of every filter, by parameter. */
export type TicketFilterValues = { readonly [F in TicketFilter as F['parameter']]: readonly TicketFilterValue<F>[] }

export type TicketEndpoint = 'page' | 'export'

const FILTERS = new Map<string, TicketFilter>(TICKET_FILTERS.map((filter) => [filter.parameter, filter]))
const REPEATABLE = new Set<string>(FILTERS.keys())
const SINGLE: Record<TicketEndpoint, Set<string>> = {
  page: new Set<string>(TICKET_PARAMETERS.page.filter((name) => !REPEATABLE.has(name))),
  export: new Set<string>(TICKET_PARAMETERS.export.filter((name) => !REPEATABLE.has(name))),
}
const PAGE_ONLY = new Set(['cursor', 'limit'])

/** Parses and checks the query; throws ApiError(invalid_request) naming the parameter. */
export function parseTicketQuery(params: URLSearchParams, endpoint: TicketEndpoint): ParsedTicketQuery {
  const single = new Map<string, string>()
  const repeated = new Map<string, Set<string>>(TICKET_FILTERS.map((filter) => [filter.parameter, new Set<string>()]))
  let filterValues = 0

  for (const [name, value] of params) {
    const isSingle = SINGLE[endpoint].has(name)
    if (!isSingle && !REPEATABLE.has(name)) {
      if (endpoint === 'export' && PAGE_ONLY.has(name)) {
        throw invalidParam(name, `Parameter '${name}' is not accepted by the CSV export, which returns the whole range in one response.`)
      }
      throw invalidParam(name, `Unknown query parameter '${printable(name)}'.`)
    }
    if (value === '') throw invalidParam(name, `Parameter '${name}' must not be empty.`)
    if (isSingle) {
      if (single.has(name)) throw invalidParam(name, `Parameter '${name}' may be given only once.`)
      single.set(name, value)
    } else {
      if (++filterValues > MAX_FILTER_VALUES) throw invalidParam(name, `At most ${MAX_FILTER_VALUES} filter values may be given.`)
      repeated.get(name)!.add(value)
    }
  }

  const fromMs = requiredInstant(single, 'from')
  const toMs = requiredInstant(single, 'to')
  if (fromMs >= toMs) throw invalidParam('to', `Parameter 'to' must be later than 'from' ('to' is exclusive).`)
  if (toMs - fromMs > MAX_RANGE_MS) {
    throw invalidParam('to', `The range from 'from' to 'to' must not exceed ${MAX_RANGE_DAYS} days; split longer history into several requests.`)
  }

  for (const filter of TICKET_FILTERS) {
    const allowed: readonly string[] | undefined = 'values' in filter ? filter.values : undefined
    if (!allowed) continue
    for (const value of repeated.get(filter.parameter)!) {
      if (!allowed.includes(value)) throw invalidParam(filter.parameter, `Parameter '${filter.parameter}' must be one of ${allowed.join(', ')}; got '${printable(value)}'.`)
    }
  }

  return {
    fromMs,
    toMs,
    from: canonicalInstant(fromMs),
    to: canonicalInstant(toMs),
    // The allowed values were checked above, so each set holds only its filter's values.
    filters: Object.fromEntries([...repeated].map(([name, values]) => [name, sorted(values)])) as unknown as TicketFilterValues,
    limit: parseLimit(single.get('limit')),
    cursor: single.get('cursor') ?? null,
    changedAfter: single.get('changedAfter') ?? null,
  }
}

function requiredInstant(single: Map<string, string>, name: 'from' | 'to'): number {
  const raw = single.get(name)
  if (raw === undefined) throw invalidParam(name, `Parameter '${name}' is required (an RFC 3339 date-time such as 2026-03-01T00:00:00Z, or a date).`)
  const result = parseInstant(raw)
  if (!result.ok) throw invalidParam(name, `Parameter '${name}' ${result.reason}.`)
  return result.ms
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_LIMIT
  const digits = /^\d+$/.test(raw) ? raw.replace(/^0+(?=\d)/, '') : null
  const value = digits !== null && digits.length <= 3 ? Number(digits) : NaN
  if (!(value >= 1 && value <= MAX_PAGE_LIMIT)) throw invalidParam('limit', `Parameter 'limit' must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`)
  return value
}

function sorted(values: Set<string>): string[] {
  return [...values].sort()
}

/** Quotes a client's value in a message without echoing control characters or a huge string. */
function printable(value: string): string {
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, '?')
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean
}
