import { describe, expect, test } from 'bun:test'
import { createRequestContext } from '../../src/http/context.ts'
import { ApiError } from '../../src/errors/api-error.ts'
import { ControlStoreUnavailableError } from '../../src/control/control-file.ts'
import { toApiError } from '../../src/http/error-response.ts'
import { memoryLogger } from '../../src/logger.ts'
import { metricsObserver } from '../../src/metrics/observer.ts'
import { createServiceMetrics } from '../../src/metrics/prometheus.ts'
import { parseScrape, valueOf } from './support.ts'

/**
 * What the observer makes of an answer that the HTTP tests cannot easily produce: the same
 * error code from a tenant file and from the control store, and an answer whose body has not
 * ended yet.
 */
function answered(path: string, status: number, error?: ApiError, bodyEnded?: Promise<void>) {
  const context = createRequestContext(new Request(`http://127.0.0.1${path}`))
  context.bodyEnded = bodyEnded
  return { context, response: new Response(null, { status }), route: path, durationMs: 1, error }
}

describe('metricsObserver', () => {
  test('503 data_unavailable counts as a tenant file unavailable on an operation, not on /readyz (the control store); 503 limits_unavailable as the limits failing closed, on an operation only', async () => {
    const metrics = createServiceMetrics()
    const observe = metricsObserver(metrics.recorder)
    observe(answered('/readyz', 503, new ApiError('data_unavailable', 'The control store cannot be read.')))
    observe(answered('/v1/tickets', 503, new ApiError('data_unavailable', 'missing')))
    observe(answered('/v1/queues', 503, new ApiError('limits_unavailable', 'down')))
    observe(answered('/readyz', 503, new ApiError('limits_unavailable', 'down')))
    // control.sqlite unreadable on an operation: the same body, not a tenant file.
    observe(answered('/v1/queues', 503, toApiError(new ControlStoreUnavailableError(), memoryLogger('debug'), 'r-1')))
    const samples = parseScrape(await metrics.registry.metrics()).samples
    expect(valueOf(samples, 'queue_api_tenant_unavailable_total')).toBe(1)
    // limits_unavailable likewise: the operation's refusal, not /readyz's.
    expect(valueOf(samples, 'queue_api_limits_unavailable_total')).toBe(1)
    expect(valueOf(samples, 'queue_api_requests_total', { operation: 'other', status: '503' })).toBe(2)
    expect(valueOf(samples, 'queue_api_requests_total', { operation: 'tickets', status: '503' })).toBe(1)
    expect(valueOf(samples, 'queue_api_requests_total', { operation: 'queues', status: '503' })).toBe(2)
    expect(valueOf(samples, 'queue_api_limit_rejections_total', { reason: 'rate_limited' })).toBe(0)
  })

  test('a body still streaming is counted when it ends, with the time to then', async () => {
    const metrics = createServiceMetrics()
    let end!: () => void
    const ended = new Promise<void>((resolve) => (end = resolve))
    metricsObserver(metrics.recorder)(answered('/v1/exports/tickets.csv', 200, undefined, ended))
    const before = parseScrape(await metrics.registry.metrics()).samples
    expect(valueOf(before, 'queue_api_requests_total', { operation: 'export', status: '200' })).toBe(0)
    end()
    await ended
    const after = parseScrape(await metrics.registry.metrics()).samples
    expect(valueOf(after, 'queue_api_requests_total', { operation: 'export', status: '200' })).toBe(1)
    expect(valueOf(after, 'queue_api_request_duration_seconds_count', { operation: 'export' })).toBe(1)
  })
})
