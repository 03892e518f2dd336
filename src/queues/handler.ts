import { invalidParam } from '../errors/api-error.ts'
import { jsonResponse, type AdmittedContext } from '../http/context.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { withTenant } from '../tenant/read.ts'
import { checkServedRows } from '../tenant/served-rows.ts'
import { listLocations } from './service.ts'

/** GET /v1/queues: takes no parameters (any is 400), returns every location with its queues. */
export function queuesHandler(pool: TenantPool) {
  return ({ caller, params, id }: AdmittedContext): Response => {
    for (const [name] of params) throw invalidParam(name, `GET /v1/queues takes no query parameters; got '${name.slice(0, 40)}'.`)
    const locations = withTenant(pool, { organisationId: caller.organisationId, requestId: id }, (lease) => {
      const read = listLocations(lease)
      checkServedRows(lease, 'locations', read)
      checkServedRows(lease, 'queues', queuesOf(read))
      return read
    })
    return jsonResponse({ locations })
  }
}

/** Every queue of the locations, made only if the check iterates them (never for a file that vouches for its rows). */
function* queuesOf(locations: readonly { queues: readonly Readonly<Record<string, unknown>>[] }[]): Iterable<Readonly<Record<string, unknown>>> {
  for (const location of locations) yield* location.queues
}
