import type { ChangedAfterRefusal, ErrorCode } from '../contract/vocabulary.ts'

/** What an error response of the API says (docs/api.md#errors). */
export interface ErrorDetails {
  status: number
  code: ErrorCode
  message: string
  requestId: string | null
  /** The whole JSON body, for fields a later version may add. */
  body: Record<string, unknown>
}

/** Any error answer of the API; `instanceof` one of the subclasses to tell them apart. */
export class ApiResponseError extends Error {
  readonly status: number
  readonly code: ErrorCode
  readonly requestId: string | null
  readonly body: Record<string, unknown>

  constructor(details: ErrorDetails) {
    super(details.message)
    this.name = new.target.name
    this.status = details.status
    this.code = details.code
    this.requestId = details.requestId
    this.body = details.body
  }
}

/** 400: a query parameter is wrong; `param` names it when one is to blame. Never retried. */
export class InvalidRequestError extends ApiResponseError {
  get param(): string | undefined {
    return typeof this.body.param === 'string' ? this.body.param : undefined
  }
  /** For a refused `changedAfter`: why (`other_history`: load the range again without it). */
  get reason(): ChangedAfterRefusal | undefined {
    return typeof this.body.reason === 'string' ? (this.body.reason as ChangedAfterRefusal) : undefined
  }
}
/** 401: the token is missing, malformed, unknown or revoked. Never retried. */
export class UnauthorizedError extends ApiResponseError {}
/** 402: the organisation does not have the API feature. Never retried. */
export class ApiNotEnabledError extends ApiResponseError {}
export class NotFoundError extends ApiResponseError {}
export class MethodNotAllowedError extends ApiResponseError {}
/** 431: the request line and headers are too large (a very long query). Never retried. */
export class HeadersTooLargeError extends ApiResponseError {}
/** 429 rate_limited: thrown only once the client's total wait (`maxRetryWaitSeconds`) would be exceeded. */
export class RateLimitedError extends ApiResponseError {
  get retryAfterSeconds(): number {
    return Number(this.body.retryAfter) || 1
  }
}
/** 429 demo_quota_exceeded: the demo organisation's day is spent; never slept through. */
export class DemoQuotaExceededError extends ApiResponseError {
  get limit(): number {
    return Number(this.body.limit)
  }
  /** When the quota resets (the next 00:00:00.000Z), ISO 8601. */
  get resetAt(): string {
    return String(this.body.resetAt)
  }
}
/** 429 too_many_exports: the token (or the server) runs as many exports as it may at once; not retried. */
export class TooManyExportsError extends ApiResponseError {
  get retryAfterSeconds(): number {
    return Number(this.body.retryAfter) || 1
  }
}
/** 500: retried a few times, then thrown. */
export class InternalServerError extends ApiResponseError {}
/** 503 data_unavailable: retried a few times, then thrown. */
export class DataUnavailableError extends ApiResponseError {}
/** 503 limits_unavailable: retried a few times, then thrown. */
export class LimitsUnavailableError extends ApiResponseError {}
/** 503 copy_behind: this replica's copy has not reached what the request names yet; retried a few times, then thrown. */
export class CopyBehindError extends ApiResponseError {}

/** One class per error code of the API; the type makes a code without a class a compile error. */
const ERROR_CLASSES: Record<ErrorCode, new (details: ErrorDetails) => ApiResponseError> = {
  invalid_request: InvalidRequestError,
  unauthorized: UnauthorizedError,
  api_not_enabled: ApiNotEnabledError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  headers_too_large: HeadersTooLargeError,
  rate_limited: RateLimitedError,
  demo_quota_exceeded: DemoQuotaExceededError,
  too_many_exports: TooManyExportsError,
  internal: InternalServerError,
  data_unavailable: DataUnavailableError,
  limits_unavailable: LimitsUnavailableError,
  copy_behind: CopyBehindError,
}

/** The server (or something in front of it) answered in a way the contract does not describe. */
export class UnexpectedResponseError extends Error {
  constructor(message: string, readonly status: number) {
    super(message)
    this.name = 'UnexpectedResponseError'
  }
}

/** The request never got an answer (connection refused or dropped), after the client's retries. */
export class NetworkError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause })
    this.name = 'NetworkError'
  }
}

/** The typed error for an error response, from its status and JSON body. */
export async function errorFromResponse(response: Response): Promise<Error> {
  let body: Record<string, unknown> = {}
  try {
    body = (await response.json()) as Record<string, unknown>
  } catch {
    // not JSON: a proxy's page, say
  }
  const code = body.error
  const Class = typeof code === 'string' && Object.hasOwn(ERROR_CLASSES, code) ? ERROR_CLASSES[code as ErrorCode] : undefined
  if (!Class) return new UnexpectedResponseError(`HTTP ${response.status} without an error body of the API`, response.status)
  return new Class({
    status: response.status,
    code: code as ErrorCode,
    message: typeof body.message === 'string' ? body.message : `HTTP ${response.status} ${code}`,
    requestId: response.headers.get('x-request-id'),
    body,
  })
}
