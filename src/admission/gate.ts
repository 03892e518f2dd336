import type { Clock } from '../clock.ts'
import type { Logger } from '../logger.ts'
import { authenticate, type LookupToken } from '../auth/authenticate.ts'
import type { TokenUseNotes } from '../control/last-used.ts'
import { ApiError } from '../errors/api-error.ts'
import type { DemoQuota, QuotaState, RateLimiter, WindowState } from '../limits/types.ts'
import { rateLimitHeaders } from '../limits/state.ts'
import type { ExportSlots } from '../limits/export-slots.ts'
import { LimitsOutage } from './limits-outage.ts'

/** Who is calling: decided by the token alone, never by the path or the query. */
export interface Caller {
  tokenId: string
  organisationId: string
  demo: boolean
}

export interface GateDeps {
  lookupToken: LookupToken
  limiter: RateLimiter
  quota: DemoQuota
  clock: Clock
  lastUsed: TokenUseNotes
  logger: Logger
  /** Told when the limits store stops answering (false: requests are refused) and when it answers again. */
  onLimitsState?: (up: boolean) => void
  /** Where the exports' slots are kept, for the outage log of a claim. @default the limiter's backend */
  exportSlots?: Pick<ExportSlots, 'backend'>
}

export interface Admission {
  caller: Caller
  /** Rate-limit headers for the response, whatever its status. */
  headers: Record<string, string>
  /**
   * Takes this request back out of the minute window and a demo organisation's day, each in one
   * atomic step of its engine: the answer was the server's own failing (503 copy_behind, a
   * replica's copy behind), which costs the client nothing. Resolves to the rate-limit headers
   * without it; when the limits cannot be reached, to the headers as counted. Once only.
   */
  refund(): Promise<Record<string, string>>
}

/**
 * Something a route takes for the request once its token is accepted (402 passed) and before
 * the window counts it, such as an export's slot: rejects with the ApiError that refuses the
 * request (answered with the window's headers, uncounted), or resolves to the function that
 * gives it back. Any other rejection means the limits cannot be reached: 503
 * limits_unavailable, as for the window. The gate gives it back when a later check refuses the
 * request; otherwise the route does.
 */
export type Claim = (caller: Caller) => Promise<() => void>

export interface Gate {
  /**
   * Admits a request or throws the ApiError that answers it. `identified` is told the caller as
   * soon as the token is recognised, so that even a 402 or 429 is logged with who it was.
   */
  admit(authorization: string | null, identified?: (caller: Caller) => void, claim?: Claim): Promise<Admission>
  /** Whether the limits can be served right now (readiness). */
  limitsReady(): Promise<boolean>
}

/**
 * The checks before the query is looked at, in order (docs/api.md#order-of-checks): token (401),
 * API feature (402), what the route claims for the request (an export's slot: 429
 * too_many_exports), minute window (429 rate_limited), demo quota (429 demo_quota_exceeded).
 * 401 and 402 count nowhere; a request answered 429 consumes nothing; every other request
 * counts once in its token's window and, for a demo organisation, once in the day's quota.
 * When the limiter or the quota cannot answer, the request is refused (503 limits_unavailable):
 * the limits fail closed.
 */
export function createGate(deps: GateDeps): Gate {
  const { lookupToken, limiter, quota, clock, lastUsed } = deps
  const outage = new LimitsOutage(deps.logger, deps.onLimitsState)
  const headersOf = (window: WindowState, day?: QuotaState) => rateLimitHeaders(window, limiter.windowSeconds, day)

  async function admit(authorization: string | null, identified?: (caller: Caller) => void, claim?: Claim): Promise<Admission> {
    const token = authenticate(authorization, lookupToken)
    const demo = token.plan === 'demo'
    const caller: Caller = { tokenId: token.tokenId, organisationId: token.organisationId, demo }
    identified?.(caller)
    lastUsed.note(token.tokenId, clock.now())

    if (!token.apiEnabled) {
      // The token is valid: its window (and a demo organisation's day) is shown, and nothing is counted.
      throw new ApiError(
        'api_not_enabled',
        'The API feature is not enabled for this organisation; an administrator can enable it.',
        {},
        await uncountedHeaders(caller),
      )
    }

    if (!claim) return count(caller)
    // A refusal is an answer of the engine, not an outage: only other failures become 503.
    const claimed = await outage.guard(deps.exportSlots?.backend ?? limiter.backend, () =>
      claim(caller).then(
        (giveBack) => ({ giveBack }),
        (error: unknown) => {
          if (error instanceof ApiError) return { refused: error }
          throw error
        },
      ),
    )
    if ('refused' in claimed) {
      const { refused } = claimed
      // Refused before the window: like any 429 it consumes nothing, and shows the limits uncounted, as a 402 does.
      throw new ApiError(refused.errorCode, refused.message, refused.extra, { ...(await uncountedHeaders(caller)), ...refused.headers })
    }
    const { giveBack } = claimed
    try {
      return await count(caller)
    } catch (error) {
      giveBack()
      throw error
    }
  }

  /**
   * The rate-limit headers of a request answered without counting (402, too_many_exports): the
   * token's window and a demo organisation's day as they stand. Such an answer needs no limit,
   * so it is given even while the limits cannot be read, only without these headers.
   */
  async function uncountedHeaders({ tokenId, organisationId, demo }: Caller): Promise<Record<string, string>> {
    const window = await outage.guard(limiter.backend, () => limiter.peek(tokenId)).catch(() => undefined)
    if (!window) return {}
    const day = demo ? await outage.guard(quota.backend, () => quota.peek(organisationId)).catch(() => undefined) : undefined
    return headersOf(window, day)
  }

  /** The minute window, then a demo organisation's day: counted, or the ApiError that refuses the request. */
  async function count(caller: Caller): Promise<Admission> {
    const { demo, tokenId, organisationId } = caller
    const { state: window, release } = await outage.guard(limiter.backend, () => limiter.consume(tokenId))
    if (!release) {
      const day = demo ? await outage.guard(quota.backend, () => quota.peek(organisationId)) : undefined
      throw new ApiError(
        'rate_limited',
        `Rate limit of ${window.limit} requests per minute exceeded; retry after ${window.retryAfterSeconds} seconds.`,
        { retryAfter: window.retryAfterSeconds },
        { ...headersOf(window, day), 'Retry-After': String(window.retryAfterSeconds) },
      )
    }
    if (!demo) {
      const headers = headersOf(window)
      return { caller, headers, refund: once(headers, async () => headersOf(await release())) }
    }

    // The window's slot is taken before the quota is asked, so that concurrent requests of this
    // token cannot overfill the window meanwhile; it is given back if the quota says no (or
    // cannot answer), because a request answered 429 or 503 consumes nothing.
    let day: QuotaState
    try {
      day = await outage.guard(quota.backend, () => quota.consume(organisationId))
    } catch (error) {
      await release().catch(() => undefined) // the engine is failing: the slot expires with its window
      throw error
    }
    if (day.allowed) {
      const counted = day
      const headers = headersOf(window, counted)
      return { caller, headers, refund: once(headers, async () => headersOf(await release(), await quota.release(organisationId, counted))) }
    }
    const restored = await outage.guard(limiter.backend, release)
    throw new ApiError(
      'demo_quota_exceeded',
      `The demo organisation's daily quota of ${day.limit} requests is used up; it resets at ${day.resetAt}.`,
      { limit: day.limit, resetAt: day.resetAt },
      { ...headersOf(restored, day), 'Retry-After': String(day.resetSeconds) },
    )
  }

  /** A refund that runs once; a limits engine that fails meanwhile leaves the headers as counted (its slot expires with the window). */
  function once(counted: Record<string, string>, refund: () => Promise<Record<string, string>>): () => Promise<Record<string, string>> {
    let done: Promise<Record<string, string>> | undefined
    return () => (done ??= refund().catch(() => counted))
  }

  return {
    admit,
    async limitsReady() {
      try {
        await outage.guard(limiter.backend, () => limiter.ping())
        await outage.guard(quota.backend, () => quota.ping())
        return true
      } catch {
        return false
      }
    },
  }
}
