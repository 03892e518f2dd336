import { invalidParam } from '../errors/api-error.ts'
import { jsonResponse, type AdmittedContext } from '../http/context.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { withTenant } from '../tenant/read.ts'
import { listLocations } from './service.ts'

/** GET /v1/queues: takes no parameters (any is 400), returns every location with its queues. */
export function queuesHandler(pool: TenantPool) {
  return ({ caller, params, id }: AdmittedContext): Response => {
    for (const [name] of params) throw invalidParam(name, `GET /v1/queues takes no query parameters; got '${name.slice(0, 40)}'.`)
    return jsonResponse({ locations: withTenant(pool, { organisationId: caller.organisationId, requestId: id }, listLocations) })
  }
}
