// Every request the export page makes to the API goes through this module, so that a shared
// client can replace it in one place. It knows HTTP and the contract's headers, nothing of the page.

/** How many tickets the preview asks for: one page, so that a preview costs one request. */
const PREVIEW_PAGE = 500

/** A failed API answer, with what is needed to explain it. */
export class ApiProblem extends Error {
  constructor(status, body, headers) {
    super(body?.message ?? `HTTP ${status}`)
    this.status = status
    this.body = body ?? {}
    this.headers = headers
  }
}

async function get(path, token, signal) {
  // Never send "Bearer null": without a token there is nothing to ask.
  if (!token) throw new ApiProblem(401, { error: 'unauthorized', message: 'No token is in use.' }, new Headers())
  const response = await fetch(path, { headers: { Authorization: `Bearer ${token}` }, signal })
  if (!response.ok) {
    const body = await response.json().catch(() => null)
    throw new ApiProblem(response.status, body, response.headers)
  }
  return response
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
  const response = await get('/v1/queues', token)
  return { locations: (await response.json()).locations, limits: readLimits(response.headers) }
}

/**
 * The first page of /v1/tickets for `params`: its items, and whether more rows match (a
 * nextCursor is there exactly when a further matching row existed, docs/api.md#ordering-and-pagination).
 */
export async function fetchFirstTickets(params, token) {
  const query = new URLSearchParams(params)
  query.set('limit', String(PREVIEW_PAGE))
  const response = await get(`/v1/tickets?${query}`, token)
  const { items, nextCursor } = await response.json()
  return { items, more: nextCursor !== null, limits: readLimits(response.headers) }
}

/**
 * Starts GET /v1/exports/tickets.csv and returns as soon as the headers are in, before any
 * byte of the body is read: the caller learns the file name (or the error) first.
 */
export async function startExport(params, token, signal) {
  const response = await get(`/v1/exports/tickets.csv?${params}`, token, signal)
  const name = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'tickets.csv'
  return { body: response.body, name, limits: readLimits(response.headers) }
}
