import { ApiError } from '../errors/api-error.ts'

/**
 * The size limit of a request head (request line and header fields), answered 431 with the JSON
 * error body by the pipeline.
 *
 * Bun's HTTP parser has a limit of its own (`http.maxHeaderSize`, 16 KiB by default) and answers
 * a head over it with a bare 431 and no body, before any of our code runs: Bun.serve has no hook
 * for it, and its `error` handler is not called. So the parser's limit is raised to
 * PARSER_HEAD_LIMIT_BYTES when the server starts (app.ts), and this lower limit, the one clients
 * had before, is ours to answer. Only a head over the parser's limit still gets Bun's bare 431:
 * somewhere the server must stop buffering a head it will refuse.
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
