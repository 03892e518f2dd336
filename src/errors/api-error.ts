import { ERROR_STATUS, type ErrorCode } from '../contract/vocabulary.ts'

/**
 * The one error vocabulary of the service (docs/api.md#errors): code anywhere throws `ApiError`
 * with a code of the contract, the code decides the status, and `errorBody` renders the one body
 * shape every error response uses.
 */
export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    /** Extra members of the body (`param`, `retryAfter`, `limit`, `resetAt`). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (`Retry-After`, `WWW-Authenticate`, `Allow`). */
    readonly headers: Record<string, string> = {},
    /** The domain error this answers, when one below http/ was mapped to it (http/error-response.ts). */
    cause?: Error,
  ) {
    super(message, cause ? { cause } : undefined)
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
