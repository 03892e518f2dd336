/**
 * The seam of the per-token minute window (docs/api.md#rate-limits). An implementation may live
 * in this process (MemoryRateLimiter) or behind a shared engine; either way `consume` decides and
 * counts in one atomic step, so concurrent requests (of any process) cannot overfill a window,
 * and every method may throw when the engine cannot be reached: the gate answers that with
 * 503 `limits_unavailable`. Every implementation passes test/support/limits-suite.ts.
 */

export interface WindowState {
  /** Whether this request was counted (consume) or one more would be (peek). */
  allowed: boolean
  limit: number
  /** Requests that may still be counted in the window (after this one, when it was counted). */
  remaining: number
  /** Whole seconds, rounded up, until the window holds no request at all; 0 when empty. */
  resetSeconds: number
  /** Whole seconds (≥ 1), rounded up, until the next request would be accepted; 0 when allowed. */
  retryAfterSeconds: number
}

export interface WindowDecision {
  state: WindowState
  /**
   * Present when the request was counted: takes exactly this request back out of the window (a
   * later check answered 429, and a request answered 429 consumes nothing) and resolves to the
   * window's state without it. Calling it again does nothing more.
   */
  release?: () => Promise<WindowState>
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

export interface RateLimiter {
  /** Length of the window in seconds (the `w` of the RateLimit-Policy header). */
  readonly windowSeconds: number
  /** Counts one request for `key` unless its window is full, in one atomic step. */
  consume(key: string): Promise<WindowDecision>
  /** The state for `key` without counting anything (for an answer that counts nowhere, such as 402). */
  peek(key: string): Promise<WindowState>
  /** Resolves when the limiter can serve; throws otherwise (readiness). */
  ping(): Promise<void>
  close(): Promise<void>
}
