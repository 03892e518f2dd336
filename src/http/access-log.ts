import type { Logger } from '../logger.ts'
import { redactTokens } from '../auth/token-shape.ts'
import type { RequestObserver } from './pipeline.ts'

/**
 * The query string for the access log, as sent (not decoded: cheaper, and unambiguous), long
 * ones cut. A token-shaped value, percent-encoded or not, is redacted before the cut, so that a
 * cut cannot leave half a token undetected; the logger redacts every field again anyway.
 */
function loggedQuery(search: string): string | undefined {
  if (search.length <= 1) return undefined
  const query = redactTokens(search.slice(1))
  return query.length > 512 ? `${query.slice(0, 512)}…` : query
}

const HEALTH_CHECKS = new Set(['/healthz', '/readyz'])
const isHealthCheck = (path: string) => HEALTH_CHECKS.has(path)

/**
 * One access-log line per answered request (docs/operations.md#logs): the pipeline's first
 * observer. Every field goes through the logger's token redaction (src/logger.ts), the path
 * included: a token pasted into a URL never reaches the log.
 */
export function accessLog(logger: Logger): RequestObserver {
  return ({ context, response, durationMs, error, pathResolved }) => {
    // A balancer checks /readyz every 500 ms: its good answers, and /healthz's, at debug only.
    const level = isHealthCheck(context.path) && response.status === 200 ? 'debug' : 'info'
    logger[level]('request', {
      requestId: context.id,
      method: context.method,
      path: context.path,
      pathResolved,
      query: loggedQuery(context.search),
      status: response.status,
      // The error code of a 4xx/5xx, so that a line tells `rate_limited` from `too_many_exports`, or `limits_unavailable` from `data_unavailable`.
      error: error?.errorCode,
      durationMs,
      organisationId: context.caller?.organisationId,
      tokenId: context.caller?.tokenId,
    })
  }
}
