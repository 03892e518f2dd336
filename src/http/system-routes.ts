import type { ControlStore } from '../control/store.ts'
import { ApiError } from '../errors/api-error.ts'
import { jsonResponse } from './context.ts'
import type { OpenRoute } from './pipeline.ts'

/**
 * Liveness and readiness, outside /v1 and without a token (docs/operations.md#health-and-readiness).
 * Ready means the control store can be read and the limits can be checked.
 */
export function systemRoutes(options: { store: ControlStore; limitsReady: () => Promise<boolean> }): OpenRoute[] {
  const { store, limitsReady } = options
  return [
    { path: '/healthz', handler: () => jsonResponse({ status: 'ok' }) },
    {
      path: '/readyz',
      handler: async () => {
        try {
          store.db.query('SELECT 1 FROM organisations LIMIT 1').get()
        } catch {
          throw new ApiError('data_unavailable', 'The control store cannot be read.')
        }
        if (!(await limitsReady())) throw new ApiError('limits_unavailable', 'The rate limits cannot be checked right now.', {}, { 'Retry-After': '1' })
        return jsonResponse({ status: 'ready' })
      },
    },
  ]
}
