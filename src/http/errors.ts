/**
 * The one error vocabulary of the API (decisions.md §9): code throws `ApiError`, one table maps
 * codes to statuses, and `errorBody` renders the one body shape every error response uses.
 */

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  api_not_enabled: 402,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  demo_quota_exceeded: 429,
  internal: 500,
  data_unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    /** Extra members of the body (`param`, `retryAfter`, `limit`, `resetAt`). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (`Retry-After`, `WWW-Authenticate`, `Allow`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.status = ERROR_STATUS[errorCode]
  }
}

/** A 400 caused by one query parameter. */
export function invalidParam(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param })
}

/** The JSON body of an error response. */
export function errorBody(error: ApiError, requestId: string): string {
  return JSON.stringify({ error: error.errorCode, message: error.message, ...error.extra, requestId })
}
