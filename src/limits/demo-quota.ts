/**
 * The seam of the demo organisations' daily quota (docs/api.md#the-demo-quota): per
 * organisation, per UTC calendar day. As with the RateLimiter, `consume` decides and counts in
 * one atomic step, a request the quota refuses consumes nothing, and every method may throw when
 * the engine cannot be reached (the gate answers 503 `limits_unavailable`).
 */

const DAY_MS = 86_400_000

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
  /** Counts one request for the organisation today unless the quota is used up. */
  consume(organisationId: string): Promise<QuotaState>
  /** Today's state without counting (for headers on answers that count nothing). */
  peek(organisationId: string): Promise<QuotaState>
  /** Resolves when the quota can serve; throws otherwise (readiness). */
  ping(): Promise<void>
  close(): Promise<void>
}

/** The state of a quota of `limit` with `used` requests counted on the UTC day of `now`. */
export function quotaState(limit: number, used: number, allowed: boolean, now: number): QuotaState {
  const reset = (Math.floor(now / DAY_MS) + 1) * DAY_MS
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    resetAt: new Date(reset).toISOString(),
    resetSeconds: Math.ceil((reset - now) / 1000),
  }
}

/** YYYY-MM-DD of the UTC day containing `now`. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10)
}
