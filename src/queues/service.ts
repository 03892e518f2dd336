import { asc } from 'drizzle-orm'
import { QueryBuilder } from 'drizzle-orm/sqlite-core'
import { locations, queues } from '../tenant/schema.ts'
import type { TenantLease } from '../tenant/lease.ts'
import type { Location } from '../contract/schemas.ts'
import { checkZone } from '../contract/time-zone.ts'
import { hasLocationTimeZones } from '../tenant/migrations.ts'
import { RowBreachError } from '../tenant/lease.ts'
import { findBreach } from '../tenant/row-check.ts'

const builder = new QueryBuilder()
const LOCATIONS_SQL = builder
  .select({ id: locations.id, name: locations.name, slug: locations.slug, timeZone: locations.timeZone })
  .from(locations)
  .orderBy(asc(locations.name), asc(locations.id))
  .toSQL().sql
/** A file older than version 5 has no time_zone column: every location's zone is null. */
const LOCATIONS_WITHOUT_ZONES_SQL = builder
  .select({ id: locations.id, name: locations.name, slug: locations.slug })
  .from(locations)
  .orderBy(asc(locations.name), asc(locations.id))
  .toSQL().sql
const QUEUES_SQL = builder
  .select({ id: queues.id, locationId: queues.locationId, name: queues.name, slug: queues.slug, status: queues.status })
  .from(queues)
  .orderBy(asc(queues.name), asc(queues.id))
  .toSQL().sql

/**
 * Every location of the organisation with its queues (docs/api.md#locations-and-queues): locations by name
 * then id, each location's queues by name then id, every queue whatever its status.
 */
export function listLocations(lease: TenantLease): Location[] {
  const withZones = hasLocationTimeZones(lease.schema().version)
  const result = lease.statement(withZones ? LOCATIONS_SQL : LOCATIONS_WITHOUT_ZONES_SQL).values() as [string, string, string, unknown?][]
  const byId = new Map<string, Location>()
  const views = result.map(([id, name, slug, zone = null]) => {
    const view: Location = { id, name, slug, timeZone: servedZone(id, zone), queues: [] }
    byId.set(id, view)
    return view
  })
  for (const [id, locationId, name, slug, status] of lease.statement(QUEUES_SQL).values() as [string, string, string, string, string][]) {
    // A queue whose location row is missing has nowhere to go in this shape; it is not invented.
    byId.get(locationId)?.queues.push({ id, name, slug, status })
  }
  return views
}

/**
 * A location's zone as served: IANA's current name (`Asia/Calcutta` → `Asia/Kolkata`), or null.
 * Whether a zone exists only Intl knows, so this is checked on every read whatever the file's
 * version (its triggers check the name's form only): an unknown zone is a row that breaks the
 * contract, answered 503 as any other (docs/operations.md#what-a-row-must-hold).
 */
function servedZone(id: string, zone: unknown): string | null {
  if (zone === null) return null
  const canonical = typeof zone === 'string' && zone.trim() === zone ? checkZone(zone).zone : null
  if (canonical === null) throw new RowBreachError(findBreach('locations', { id, timeZone: zone })!)
  return canonical
}
