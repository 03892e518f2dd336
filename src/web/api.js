// Every request the export page makes to the API goes through this module, on the project's
// client (src/client/, served as /assets/client.js). It knows the contract's headers, nothing of the page.

import { ApiResponseError, Client } from './client.js'

export { ApiResponseError }

/** How many tickets the preview asks for: one page, so that a preview costs one request. */
const PREVIEW_PAGE = 500

/**
 * The project's client for one call, with the token in use. The page waits for nothing and
 * retries nothing by itself: a 429 is shown with its countdown and a failure explained, so the
 * analyst decides. `answered` is told every answer (for the rate-limit headers).
 */
function clientFor(token, answered) {
  // Never send "Bearer null": without a token there is nothing to ask.
  if (!token) {
    const body = { error: 'unauthorized', message: 'No token is in use.' }
    throw new ApiResponseError({ status: 401, code: 'unauthorized', message: body.message, requestId: null, body })
  }
  return new Client({ baseUrl: location.origin, token, maxAttempts: 1, maxRetryWaitSeconds: 0, onResponse: answered })
}

/**
 * Runs `work` with a client for one call. Resolves to its result and the limits its last answer
 * showed; an error answer that showed them (every answer after the token was recognised) carries
 * them as `error.limits`.
 */
async function call(token, work) {
  let last = null
  const client = clientFor(token, (response) => (last = response))
  try {
    return { result: await work(client), limits: readLimits(last.headers) }
  } catch (error) {
    if (error instanceof ApiResponseError && last?.headers.get('RateLimit-Policy')) error.limits = readLimits(last.headers)
    throw error
  }
}

/** The query of the ticket operations, from the page's URLSearchParams. */
function ticketQuery(params) {
  return { from: params.get('from'), to: params.get('to'), queueId: params.getAll('queueId'), locationId: params.getAll('locationId'), status: params.getAll('status') }
}

/**
 * The items of an IETF RateLimit / RateLimit-Policy field (`"minute";r=59;t=1, "day";r=37;t=3600`)
 * as { minute: { r: 59, t: 1 }, day: { r: 37, t: 3600 } }.
 */
function parseLimitItems(field) {
  const items = {}
  for (const item of (field ?? '').split(',')) {
    const [name, ...params] = item.trim().split(';')
    const key = /^"([^"]+)"$/.exec(name ?? '')?.[1]
    if (!key) continue
    items[key] = {}
    for (const param of params) {
      const [k, v] = param.split('=')
      if (k && v !== undefined && /^\d+$/.test(v)) items[key][k.trim()] = Number(v)
    }
  }
  return items
}

/**
 * What an answer's rate-limit headers say about the caller: whether its organisation is a demo
 * one (only those have a "day" item, docs/api.md#rate-limit-headers) and, if so, the day's quota.
 */
export function readLimits(headers) {
  const policy = parseLimitItems(headers.get('RateLimit-Policy'))
  const current = parseLimitItems(headers.get('RateLimit'))
  const day = policy.day && current.day ? { limit: policy.day.q, remaining: current.day.r, resetSeconds: current.day.t } : null
  return { demo: Boolean(policy.day) || headers.get('X-Service-Demo') === '1', day }
}

/** GET /v1/queues: the locations with their queues, and what the answer said about the limits. */
export async function fetchLocations(token) {
  const { result, limits } = await call(token, (client) => client.queues())
  return { locations: result.locations, limits }
}

/**
 * The first page of /v1/tickets for `params`: its items, and whether more rows match (a
 * nextCursor is there exactly when a further matching row existed, docs/api.md#ordering-and-pagination).
 */
export async function fetchFirstTickets(params, token) {
  const { result: page, limits } = await call(token, async (client) => {
    const pages = client.pages({ ...ticketQuery(params), limit: PREVIEW_PAGE })
    const { value } = await pages.next()
    await pages.return(undefined) // one page is the preview: the rest is never asked for
    return value
  })
  return { items: page.items, more: page.nextCursor !== null, limits }
}

/**
 * Starts GET /v1/exports/tickets.csv and returns as soon as the headers are in, before any
 * byte of the body is read: the caller learns the file name (or the error) first.
 */
export async function startExport(params, token, signal) {
  const { result: exported, limits } = await call(token, (client) => client.exportCsv(ticketQuery(params), { signal }))
  return { body: exported.stream, name: exported.fileName, limits }
}
