import type { QuotaState, WindowDecision, WindowState } from './types.ts'

/**
 * The arithmetic of the limits, shared by every engine so that they answer alike: what a
 * sliding window and a day's quota tell a client, the decision for a counted request, and the
 * rate-limit headers made of them.
 */

export const DAY_MS = 86_400_000

/**
 * What a sliding window of `limit` requests per `windowMs` tells a client at `now`, from the
 * counted requests still inside it. One function for every implementation (the in-memory log and
 * the Redis script's reply), so that the headers round the same way whichever engine counted.
 */
export function describeWindow(window: {
  limit: number
  windowMs: number
  now: number
  /** Counted requests still inside the window. */
  count: number
  /** Time of the newest of them; undefined when there is none. */
  newest: number | undefined
  /** Time of the request that must leave before one more fits (the limit-th most recent); undefined when one more fits. */
  blocking: number | undefined
}): WindowState {
  const { limit, windowMs, now, count, newest, blocking } = window
  return {
    allowed: count < limit,
    limit,
    remaining: Math.max(0, limit - count),
    // Never negative, even on a clock that went back (Redis's can). The difference first: on
    // fractional milliseconds `newest + windowMs - now` puts a request just counted a hair over.
    resetSeconds: newest === undefined ? 0 : Math.max(0, Math.ceil((newest - now + windowMs) / 1000)),
    retryAfterSeconds: blocking === undefined ? 0 : Math.max(1, Math.ceil((blocking - now + windowMs) / 1000)),
  }
}

/**
 * The decision for a request an implementation has just counted: `allowed` says it was counted
 * (the window's own state after it would say whether one more fits) and it waits for nothing;
 * `giveBack` runs at most once, and a later call only reads the window again.
 */
export function countedDecision(state: WindowState, giveBack: () => Promise<WindowState>, peek: () => Promise<WindowState>): WindowDecision {
  let released = false
  return {
    state: { ...state, allowed: true, retryAfterSeconds: 0 },
    release: () => {
      if (released) return peek()
      released = true
      return giveBack()
    },
  }
}

/**
 * The state of a quota of `limit` with `used` requests counted on `day` (YYYY-MM-DD), by default
 * the UTC day of `now`; a later day when the wall clock was stepped back (see StoredDemoQuota).
 */
export function quotaState(limit: number, used: number, allowed: boolean, now: number, day: string = utcDay(now)): QuotaState {
  const reset = Date.parse(`${day}T00:00:00.000Z`) + DAY_MS
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    resetAt: new Date(reset).toISOString(),
    resetSeconds: Math.ceil((reset - now) / 1000),
  }
}

/** YYYY-MM-DD of the UTC day a quota state was counted on (the day before its resetAt). */
export function countedDay(state: QuotaState): string {
  return utcDay(Date.parse(state.resetAt) - DAY_MS)
}

/** YYYY-MM-DD of the UTC day containing `now`. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10)
}

/**
 * Rate-limit response headers (docs/api.md#rate-limit-headers). The `X-RateLimit-*` fields always describe the
 * minute window; the IETF draft fields (draft-ietf-httpapi-ratelimit-headers) repeat it and, for
 * a demo organisation, add the day's quota.
 */
export function rateLimitHeaders(window: WindowState, windowSeconds: number, quota?: QuotaState): Record<string, string> {
  let policy = `"minute";q=${window.limit};w=${windowSeconds}`
  let current = `"minute";r=${window.remaining};t=${window.resetSeconds}`
  if (quota) {
    policy += `, "day";q=${quota.limit};w=86400`
    current += `, "day";r=${quota.remaining};t=${quota.resetSeconds}`
  }
  return {
    'X-RateLimit-Limit': String(window.limit),
    'X-RateLimit-Remaining': String(window.remaining),
    'X-RateLimit-Reset': String(window.resetSeconds),
    'RateLimit-Policy': policy,
    RateLimit: current,
  }
}
