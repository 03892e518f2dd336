/**
 * The shared types of the limits (docs/api.md#rate-limits, docs/api.md#the-demo-quota): the
 * seams every engine implements (in memory and control.sqlite, or Redis) and what they answer.
 * Every implementation passes test/support/limits-suite.ts.
 */

import type { ExportSlots } from './export-slots.ts'

/**
 * Where an engine keeps its counts: an outage is logged, and its end found, per backend (the
 * embedded window in memory never fails while the quota's control.sqlite may).
 */
export type LimitsBackend = 'memory' | 'control.sqlite' | 'redis'

/**
 * The per-token minute window and the demo organisations' daily quota, as the gate uses them,
 * and the exports running at once (src/limits/export-slots.ts), all in one engine.
 */
export interface Limits {
  limiter: RateLimiter
  quota: DemoQuota
  exportSlots: ExportSlots
}

/*
 * The seam of the per-token minute window (docs/api.md#rate-limits). An implementation may live
 * in this process (MemoryRateLimiter) or behind a shared engine; either way `consume` decides and
 * counts in one atomic step, so concurrent requests (of any process) cannot overfill a window,
 * and every method may throw when the engine cannot be reached: the gate answers that with
 * 503 `limits_unavailable`.
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

export interface RateLimiter {
  readonly backend: LimitsBackend
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

/*
 * The seam of the demo organisations' daily quota (docs/api.md#the-demo-quota): per
 * organisation, per UTC calendar day. As with the RateLimiter, `consume` decides and counts in
 * one atomic step, a request the quota refuses consumes nothing, and every method may throw when
 * the engine cannot be reached (the gate answers 503 `limits_unavailable`).
 */

export interface QuotaState {
  allowed: boolean
  limit: number
  /** Requests left today (after this one, when it was counted). */
  remaining: number
  /** Next 00:00:00.000Z, ISO 8601. */
  resetAt: string
  /** Whole seconds, rounded up, until `resetAt`. */
  resetSeconds: number
}

export interface DemoQuota {
  readonly backend: LimitsBackend
  /** Counts one request for the organisation today unless the quota is used up. */
  consume(organisationId: string): Promise<QuotaState>
  /** Today's state without counting (for headers on answers that count nothing). */
  peek(organisationId: string): Promise<QuotaState>
  /**
   * Takes back one request that a consume answered `counted` (allowed) for, on that consume's
   * day, in one atomic step and never below zero: the request turned out to be the server's
   * own failing (a replica's copy behind, 503 copy_behind), which consumes nothing.
   * Resolves to the day's state without it.
   */
  release(organisationId: string, counted: QuotaState): Promise<QuotaState>
  /** Resolves when the quota can serve; throws otherwise (readiness). */
  ping(): Promise<void>
  close(): Promise<void>
}
