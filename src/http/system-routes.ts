import { Elysia } from 'elysia'
import type { ControlStore } from '../control/store.ts'
import { ApiError } from '../errors/api-error.ts'

/** Liveness and readiness, outside /v1 and without a token (decisions.md §12). */
export function systemRoutes(store: ControlStore) {
  return new Elysia({ name: 'system' })
    .get('/healthz', () => ({ status: 'ok' }))
    .get('/readyz', () => {
      try {
        store.db.query('SELECT 1 FROM organisations LIMIT 1').get()
      } catch {
        throw new ApiError('data_unavailable', 'The control store cannot be read.')
      }
      return { status: 'ready' }
    })
}
