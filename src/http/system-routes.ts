import type { ControlStore } from '../control/store.ts'
import { ApiError } from '../errors/api-error.ts'
import type { CopyHealth } from '../replica/copy-state.ts'
import { jsonResponse } from './context.ts'
import type { OpenRoute } from './pipeline.ts'

/**
 * Liveness and readiness, outside /v1 and without a token (docs/operations.md#health-and-readiness).
 * Ready means the control store can be read, the limits can be checked and, on a replica, the
 * copy was confirmed current against the storage within `maxCopyAgeSeconds`. Files a replica
 * could not restore are reported, not refused: the other organisations are served.
 */
export function systemRoutes(options: { store: ControlStore; limitsReady: () => Promise<boolean>; copy?: () => CopyHealth | undefined; maxCopyAgeSeconds?: number }): OpenRoute[] {
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
        const copy = options.copy?.()
        if (copy && copy.ageSeconds > (options.maxCopyAgeSeconds ?? Number.POSITIVE_INFINITY)) {
          const age = Number.isFinite(copy.ageSeconds) ? `${Math.round(copy.ageSeconds)} s ago` : 'at a time its state file no longer says'
          throw new ApiError('data_unavailable', `This replica's copy was last confirmed current ${age}, longer than REPLICA_MAX_AGE_S (${options.maxCopyAgeSeconds} s): is its restore loop running?`, {}, { 'Retry-After': '5' })
        }
        if (!(await limitsReady())) throw new ApiError('limits_unavailable', 'The rate limits cannot be checked right now.', {}, { 'Retry-After': '1' })
        return jsonResponse(copy?.unrestored.length ? { status: 'ready', unrestored: copy.unrestored } : { status: 'ready' })
      },
    },
  ]
}
