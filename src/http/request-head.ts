import { ApiError } from '../errors/api-error.ts'

/**
 * The size limit of a request head, answered 431 with the JSON error body by the pipeline.
 * Bun's parser answers a head over its own limit with a bare 431 before any of our code runs, so
 * app.ts raises that limit to PARSER_HEAD_LIMIT_BYTES and this lower one is ours to answer.
 */
export const REQUEST_HEAD_LIMIT_BYTES = 16 * 1024

/** The limit of Bun's parser while the service runs: 4 × ours. */
export const PARSER_HEAD_LIMIT_BYTES = 4 * REQUEST_HEAD_LIMIT_BYTES

/**
 * The size of the request head as sent, near enough: `METHOD target HTTP/1.1` and one
 * `name: value` line per field, each with its CRLF. (A field sent on several lines is counted
 * once, joined by ", ": a few bytes off at most.)
 */
export function requestHeadBytes(request: Request, target: { method: string; path: string; search: string }): number {
  let bytes = target.method.length + target.path.length + target.search.length + 12
  for (const [name, value] of request.headers) bytes += name.length + value.length + 4
  return bytes + 2
}

export function headTooLarge(): ApiError {
  return new ApiError(
    'headers_too_large',
    `The request line and headers together exceed ${REQUEST_HEAD_LIMIT_BYTES / 1024} KiB; send fewer or shorter headers, or a shorter query.`,
  )
}
