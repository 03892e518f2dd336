import type { WindowState } from './rate-limiter.ts'

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
    resetSeconds: newest === undefined ? 0 : Math.ceil((newest + windowMs - now) / 1000),
    retryAfterSeconds: blocking === undefined ? 0 : Math.max(1, Math.ceil((blocking + windowMs - now) / 1000)),
  }
}
