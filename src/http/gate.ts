import type { Clock } from '../clock.ts'
import type { ControlStore } from '../control/store.ts'
import { authenticate, type LastUsedRecorder } from '../auth/authenticate.ts'
import { ApiError } from '../errors/api-error.ts'
import type { RateLimiter } from '../limits/sliding-window.ts'
import type { DemoQuota, QuotaState } from '../limits/demo-quota.ts'
import { rateLimitHeaders } from '../limits/headers.ts'

/** Who is calling: decided by the token alone, never by the path or the query. */
export interface Caller {
  tokenId: string
  organisationId: string
  demo: boolean
}

export interface GateDeps {
  store: ControlStore
  limiter: RateLimiter
  windowSeconds: number
  quota: DemoQuota
  clock: Clock
  lastUsed: LastUsedRecorder
}

export interface Admission {
  caller: Caller
  /** Rate-limit headers for the response, whatever its status. */
  headers: Record<string, string>
}

/**
 * The checks of decisions.md §5 before the query is looked at, in order: token (401), API
 * feature (402), minute window (429 rate_limited), demo quota (429 demo_quota_exceeded).
 * 401 and 402 count nowhere; a request answered 429 consumes nothing; every other request
 * counts once in its token's window and, for a demo organisation, once in the day's quota.
 */
export function createGate(deps: GateDeps): (authorization: string | null) => Promise<Admission> {
  const { store, limiter, windowSeconds, quota, clock, lastUsed } = deps

  return async function admit(authorization) {
    const now = clock.now()
    const token = authenticate(authorization, store)
    const demo = token.plan === 'demo'
    const caller: Caller = { tokenId: token.tokenId, organisationId: token.organisationId, demo }
    lastUsed.note(token.tokenId, now)

    const window = limiter.peek(token.tokenId, now)
    if (!token.apiEnabled) {
      // The token is valid: its window is shown, and nothing is counted (decisions.md §6).
      throw new ApiError(
        'api_not_enabled',
        'The API feature is not enabled for this organisation; an administrator can enable it.',
        {},
        rateLimitHeaders(window, windowSeconds),
      )
    }
    if (!window.allowed) {
      const headers = rateLimitHeaders(window, windowSeconds, demo ? quota.peek(token.organisationId, now) : undefined)
      throw new ApiError(
        'rate_limited',
        `Rate limit of ${window.limit} requests per minute exceeded; retry after ${window.retryAfterSeconds} seconds.`,
        { retryAfter: window.retryAfterSeconds },
        { ...headers, 'Retry-After': String(window.retryAfterSeconds) },
      )
    }

    // The window's slot is taken before the quota is asked (which may wait for a lock), so that
    // concurrent requests of this token cannot overfill the window meanwhile; it is given back
    // if the quota says no, because a request answered 429 consumes nothing.
    const counted = limiter.record(token.tokenId, now)
    let day: QuotaState | undefined
    if (demo) {
      try {
        day = await quota.consume(token.organisationId, now)
      } catch (error) {
        limiter.release(token.tokenId, now)
        throw error
      }
      if (!day.allowed) {
        limiter.release(token.tokenId, now)
        const headers = rateLimitHeaders(window, windowSeconds, day)
        throw new ApiError(
          'demo_quota_exceeded',
          `The demo organisation's daily quota of ${day.limit} requests is used up; it resets at ${day.resetAt}.`,
          { limit: day.limit, resetAt: day.resetAt },
          { ...headers, 'Retry-After': String(day.resetSeconds) },
        )
      }
    }
    return { caller, headers: rateLimitHeaders(counted, windowSeconds, day) }
  }
}
