import { changesFloor, type ChangesTokenCodec } from '../changes/token.ts'
import { readChangeWindow } from '../changes/window.ts'
import { invalidParam } from '../errors/api-error.ts'
import { jsonResponse, type AdmittedContext } from '../http/context.ts'
import type { TenantPool } from '../tenant/pool.ts'
import { inSnapshot, withTenant as withLease } from '../tenant/read.ts'
import { checkServedRows } from '../tenant/served-rows.ts'
import { listLocations } from './service.ts'

/**
 * GET /v1/queues: takes no parameters (any is 400), returns every location with its queues. An
 * X-Changes-Floor is held to as on the ticket routes: a loader's places never come from a copy
 * behind the tickets it holds (503 `copy_behind`), and a header that is not one of the
 * organisation's changes tokens is 400.
 */
export function queuesHandler(pool: TenantPool, changes: ChangesTokenCodec) {
  return ({ caller, params, id, request }: AdmittedContext): Response => {
    for (const [name] of params) throw invalidParam(name, `GET /v1/queues takes no query parameters; got '${name.slice(0, 40)}'.`)
    const floor = changesFloor(changes, caller.organisationId, request)
    // In one snapshot only with a floor: the check and the places must be of one state of the file.
    const reading = floor === null ? withLease : inSnapshot
    const locations = reading(pool, { organisationId: caller.organisationId, requestId: id }, (lease) => {
      if (floor !== null) readChangeWindow(lease, changes, null, [floor])
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
