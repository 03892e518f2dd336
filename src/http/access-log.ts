import type { Logger } from '../logger.ts'
import type { RequestObserver } from './pipeline.ts'

/** Anything shaped like an API token in a logged query string is replaced, so no token reaches a log. */
const TOKEN_LIKE = /svc_[A-Za-z0-9%]*/gi

/**
 * The query string for the access log, as sent (not decoded: cheaper, and unambiguous), with
 * token-like values redacted and long ones cut. `%5F` is `_`, so `svc%5F…` is caught as well.
 */
export function redactQuery(search: string): string | undefined {
  if (search.length <= 1) return undefined
  let query = search.slice(1)
  if (/svc(_|%5f)/i.test(query)) query = query.replace(/svc%5f/gi, 'svc_').replace(TOKEN_LIKE, 'svc_[redacted]')
  return query.length > 512 ? `${query.slice(0, 512)}…` : query
}

/** One access-log line per answered request (docs/operations.md#logs): the pipeline's first observer. */
export function accessLog(logger: Logger): RequestObserver {
  return ({ context, response, durationMs }) => {
    logger.info('request', {
      requestId: context.id,
      method: context.method,
      path: context.path,
      query: redactQuery(context.search),
      status: response.status,
      durationMs,
      organisationId: context.caller?.organisationId,
      tokenId: context.caller?.tokenId,
    })
  }
}
