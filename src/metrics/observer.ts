import type { RequestObserver } from '../http/pipeline.ts'
import { ControlStoreUnavailableError } from '../control/control-file.ts'
import { LIMIT_REJECTIONS, operationOf, type LimitRejection, type MetricsRecorder } from './recorder.ts'

const REJECTIONS: ReadonlySet<string> = new Set(LIMIT_REJECTIONS)

/**
 * The metrics' observer of the request pipeline (src/http/pipeline.ts): every answered request
 * is counted once, by operation and status, with its duration to the last byte (an export's
 * `bodyEnded`, else the response being ready); the error that answered it, if any, tells a limit
 * rejection (429), a tenant file that cannot be served (503 data_unavailable on a /v1 route) or
 * the limits failing closed (503 limits_unavailable on a /v1 route; /readyz's is not a request refused).
 */
export function metricsObserver(metrics: MetricsRecorder): RequestObserver {
  return ({ context, response, error }) => {
    const operation = operationOf(context.path)
    const status = response.status
    if (error) {
      if (REJECTIONS.has(error.errorCode)) metrics.limitRejected(error.errorCode as LimitRejection)
      // /readyz answers data_unavailable for the control store, and so does an operation when
      // control.sqlite cannot be read: only the others are a tenant file that cannot be served.
      else if (error.errorCode === 'data_unavailable' && operation !== 'other' && !(error.cause instanceof ControlStoreUnavailableError)) metrics.tenantUnavailable()
      else if (error.errorCode === 'limits_unavailable' && operation !== 'other') metrics.limitsUnavailable()
    }
    const record = () => metrics.requestAnswered(operation, status, (performance.now() - context.startedAt) / 1000)
    if (context.bodyEnded) void context.bodyEnded.then(record)
    else record()
  }
}
