/**
 * Exact sliding-window rate limiter: at most `limit` counted requests per key in any interval
 * of `windowMs`. Each key keeps the times of its counted requests still inside the window
 * (at most `limit` numbers), so a check is O(limit) in the worst case and O(1) usually; keys
 * idle for a whole window are dropped by `sweep`, so memory follows the keys active in the
 * last window, not every key ever seen.
 */

export interface WindowState {
  /** Whether one more request may be counted now. */
  allowed: boolean
  limit: number
  /** Requests that may still be counted in the window (after this one, when it was counted). */
  remaining: number
  /** Whole seconds, rounded up, until the window holds no request at all; 0 when empty. */
  resetSeconds: number
  /** Whole seconds (≥ 1), rounded up, until the next request would be accepted; 0 when allowed. */
  retryAfterSeconds: number
}

/** The seam the request pipeline uses; tests can swap in another implementation. */
export interface RateLimiter {
  /** The state for `key` without counting anything. */
  peek(key: string, now: number): WindowState
  /** Counts one request for `key` (call only after `peek` allowed it) and returns the new state. */
  record(key: string, now: number): WindowState
  /** Takes back a request counted at `at` (it was answered 429 by a later check after all). */
  release(key: string, at: number): void
}

export class SlidingWindowLimiter implements RateLimiter {
  /** Per key: ascending times of counted requests inside the window. */
  private readonly windows = new Map<string, number[]>()
  private lastSweep = -Infinity

  constructor(
    readonly limit: number,
    readonly windowMs: number = 60_000,
  ) {}

  peek(key: string, now: number): WindowState {
    this.maybeSweep(now)
    return this.describe(this.live(key, now), now)
  }

  record(key: string, now: number): WindowState {
    let times = this.live(key, now)
    if (!times) {
      times = []
      this.windows.set(key, times)
    }
    times.push(now)
    return this.describe(times, now)
  }

  release(key: string, at: number): void {
    const times = this.windows.get(key)
    const index = times?.lastIndexOf(at) ?? -1
    if (index >= 0) times!.splice(index, 1)
    if (times?.length === 0) this.windows.delete(key)
  }

  /** Keys with state; for tests and metrics. */
  get size(): number {
    return this.windows.size
  }

  /** Drops every key whose requests have all left the window. */
  sweep(now: number): void {
    this.lastSweep = now
    const horizon = now - this.windowMs
    for (const [key, times] of this.windows) {
      if (times[times.length - 1]! <= horizon) this.windows.delete(key)
    }
  }

  /** The key's times with expired ones removed (undefined when none are left). */
  private live(key: string, now: number): number[] | undefined {
    const times = this.windows.get(key)
    if (!times) return undefined
    const horizon = now - this.windowMs
    let expired = 0
    while (expired < times.length && times[expired]! <= horizon) expired++
    if (expired > 0) times.splice(0, expired)
    if (times.length === 0) {
      this.windows.delete(key)
      return undefined
    }
    return times
  }

  private describe(times: number[] | undefined, now: number): WindowState {
    const count = times?.length ?? 0
    const allowed = count < this.limit
    const newest = times?.[count - 1]
    // The request that must leave the window before one more fits: the limit-th most recent.
    const blocking = allowed ? undefined : times![count - this.limit]!
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: newest === undefined ? 0 : Math.ceil((newest + this.windowMs - now) / 1000),
      retryAfterSeconds: blocking === undefined ? 0 : Math.max(1, Math.ceil((blocking + this.windowMs - now) / 1000)),
    }
  }

  /** Sweeping is amortised: at most once per window of time, from whichever request comes first. */
  private maybeSweep(now: number): void {
    if (now - this.lastSweep >= this.windowMs) this.sweep(now)
  }
}
