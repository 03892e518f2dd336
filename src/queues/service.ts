import { asc } from 'drizzle-orm'
import { QueryBuilder } from 'drizzle-orm/sqlite-core'
import { locations, queues } from '../tenant/schema.ts'
import type { TenantLease } from '../tenant/lease.ts'
import type { Location } from '../contract/schemas.ts'


const builder = new QueryBuilder()
const LOCATIONS_SQL = builder
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
  const result = lease.statement(LOCATIONS_SQL).values() as [string, string, string][]
  const byId = new Map<string, Location>()
  const views = result.map(([id, name, slug]) => {
    const view: Location = { id, name, slug, queues: [] }
    byId.set(id, view)
    return view
  })
  for (const [id, locationId, name, slug, status] of lease.statement(QUEUES_SQL).values() as [string, string, string, string, string][]) {
    // A queue whose location row is missing has nowhere to go in this shape; it is not invented.
    byId.get(locationId)?.queues.push({ id, name, slug, status })
  }
  return views
}
