import { invalidParam } from '../errors/api-error.ts'
import type { Caller } from '../admission/caller.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { withTenant } from '../tenant/read.ts'
import { listLocations, type LocationView } from './service.ts'

/** GET /v1/queues: takes no parameters (any is 400), returns every location with its queues. */
export function queuesHandler(pool: TenantPool) {
  return (caller: Caller, params: URLSearchParams): { locations: LocationView[] } => {
    for (const [name] of params) throw invalidParam(name, `GET /v1/queues takes no query parameters; got '${name.slice(0, 40)}'.`)
    return { locations: withTenant(pool, caller.organisationId, listLocations) }
  }
}
