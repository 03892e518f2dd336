import type { WindowState } from './rate-limiter.ts'
import type { QuotaState } from './demo-quota.ts'

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
