// Every request the export page makes to the API goes through this module, on the project's
// client (src/client/, served as /assets/client.js). It knows the contract's headers, nothing of the page.

import { ApiResponseError, Client, UnauthorizedError, type CsvExport, type Location, type Ticket, type TicketQuery, type TicketStatus } from '../client/index.ts'

/** How many tickets the preview asks for: one page, so that a preview costs one request. */
const PREVIEW_PAGE = 500

/** A demo organisation's day, as the rate-limit headers tell it. */
export interface DayQuota {
  limit: number | undefined
  remaining: number | undefined
  resetSeconds: number | undefined
}

/** What an answer's rate-limit headers say about the caller. */
export interface PageLimits {
  demo: boolean
  day: DayQuota | null
}

/** The limits an error answer showed (every answer after the token was recognised shows them). */
const limitsOfErrors = new WeakMap<ApiResponseError, PageLimits>()

export function limitsShownBy(error: unknown): PageLimits | undefined {
  return error instanceof ApiResponseError ? limitsOfErrors.get(error) : undefined
}

/** Remembers the limits an error answer showed, for limitsShownBy() (an error met elsewhere, as in the charts' worker). */
export function rememberLimits(error: unknown, limits: PageLimits | null): void {
  if (limits && error instanceof ApiResponseError) limitsOfErrors.set(error, limits)
}

/** What an answer showed of the limits, or null when it showed none (an answer before the token was recognised). */
export function limitsShown(headers: Headers): PageLimits | null {
  return headers.get('RateLimit-Policy') ? readLimits(headers) : null
}

/**
 * The project's client for one call, with the token in use. The page waits for nothing and
 * retries nothing by itself: a 429 is shown with its countdown and a failure explained, so the
 * analyst decides. `answered` is told every answer (for the rate-limit headers).
 */
function clientFor(token: string | null, answered: (response: Response) => void): Client {
  // Never send "Bearer null": without a token there is nothing to ask.
  if (!token) {
    const body = { error: 'unauthorized', message: 'No token is in use.' }
    throw new UnauthorizedError({ status: 401, code: 'unauthorized', message: body.message, requestId: null, body })
  }
  return new Client({ baseUrl: location.origin, token, maxAttempts: 1, maxRetryWaitSeconds: 0, onResponse: answered })
}

/**
 * Runs `work` with a client for one call. Resolves to its result and the limits its last answer
 * showed; an error answer that showed them is remembered for limitsShownBy().
 */
async function call<T>(token: string | null, work: (client: Client) => Promise<T>): Promise<{ result: T; limits: PageLimits }> {
  let last: Response | null = null
  const client = clientFor(token, (response) => (last = response))
  try {
    const result = await work(client)
    return { result, limits: readLimits(last!.headers) }
  } catch (error) {
    const answer = last as Response | null
    if (answer) rememberLimits(error, limitsShown(answer.headers))
    throw error
  }
}

/** The query of the ticket operations, from the page's URLSearchParams. */
export function ticketQuery(params: URLSearchParams): TicketQuery {
  return {
    from: params.get('from')!,
    to: params.get('to')!,
    queueId: params.getAll('queueId'),
    locationId: params.getAll('locationId'),
    status: params.getAll('status') as TicketStatus[],
  }
}

type LimitItems = Record<string, Record<string, number>>

/**
 * The items of an IETF RateLimit / RateLimit-Policy field (`"minute";r=59;t=1, "day";r=37;t=3600`)
 * as { minute: { r: 59, t: 1 }, day: { r: 37, t: 3600 } }.
 */
function parseLimitItems(field: string | null): LimitItems {
  const items: LimitItems = {}
  for (const item of (field ?? '').split(',')) {
    const [name, ...params] = item.trim().split(';')
    const key = /^"([^"]+)"$/.exec(name ?? '')?.[1]
    if (!key) continue
    const values: Record<string, number> = (items[key] = {})
    for (const param of params) {
      const [k, v] = param.split('=')
      if (k && v !== undefined && /^\d+$/.test(v)) values[k.trim()] = Number(v)
    }
  }
  return items
}

/**
 * What an answer's rate-limit headers say about the caller: whether its organisation is a demo
 * one (only those have a "day" item, docs/api.md#rate-limit-headers) and, if so, the day's quota.
 */
export function readLimits(headers: Headers): PageLimits {
  const policy = parseLimitItems(headers.get('RateLimit-Policy'))
  const current = parseLimitItems(headers.get('RateLimit'))
  const day = policy.day && current.day ? { limit: policy.day.q, remaining: current.day.r, resetSeconds: current.day.t } : null
  return { demo: Boolean(policy.day) || headers.get('X-Service-Demo') === '1', day }
}

/** GET /v1/queues: the locations with their queues, and what the answer said about the limits. */
export async function fetchLocations(token: string | null): Promise<{ locations: Location[]; limits: PageLimits }> {
  const { result, limits } = await call(token, (client) => client.queues())
  return { locations: result.locations, limits }
}

/**
 * The first page of /v1/tickets for `params`: its items, and whether more rows match (a
 * nextCursor is there exactly when a further matching row existed, docs/api.md#ordering-and-pagination).
 */
export async function fetchFirstTickets(params: URLSearchParams, token: string | null): Promise<{ items: Ticket[]; more: boolean; limits: PageLimits }> {
  const { result: page, limits } = await call(token, async (client) => {
    const pages = client.pages({ ...ticketQuery(params), limit: PREVIEW_PAGE })
    const { value } = await pages.next()
    await pages.return(undefined) // one page is the preview: the rest is never asked for
    return value!
  })
  return { items: page.items, more: page.nextCursor !== null, limits }
}

/**
 * Starts GET /v1/exports/tickets.csv and returns as soon as the headers are in, before any
 * byte of the body is read: the caller learns the file name (or the error) first.
 */
export async function startExport(params: URLSearchParams, token: string | null, signal: AbortSignal): Promise<{ body: CsvExport['stream']; name: CsvExport['fileName']; limits: PageLimits }> {
  const { result: exported, limits } = await call(token, (client) => client.exportCsv(ticketQuery(params), { signal }))
  return { body: exported.stream, name: exported.fileName, limits }
}
