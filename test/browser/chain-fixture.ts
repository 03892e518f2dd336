import type { FixtureTicket } from '../support/fixtures.ts'
import { writeTickets } from '../support/fixtures.ts'
import { openTenant, type TestServer } from '../support/harness.ts'

/** One location of the test chain: its id, name, zone (null: none in the file) and queue ids. */
export interface ChainLocation {
  id: string
  name: string
  zone: string | null
  queues: { id: string; name: string }[]
}

/** The zones the chain's locations are in, in turn; a null is a location without one. */
const ZONES = ['America/New_York', 'Asia/Kolkata', 'Europe/Moscow', 'Europe/Zurich', 'America/Los_Angeles', 'Australia/Sydney', null, 'Asia/Tokyo', 'America/Sao_Paulo', 'Africa/Johannesburg', 'Pacific/Auckland', 'America/Chicago']
const TOWNS = ['Saint-Jean-sur-Richelieu Centre-ville', 'Kolkata Park Street', 'Moskva Tverskaya', 'Zürich Bahnhofstrasse', 'Los Angeles Downtown', 'Sydney Circular Quay', 'Reykjavík Laugavegur', 'Tokyo Shinjuku', 'São Paulo Paulista', 'Johannesburg Sandton']

/**
 * A chain of 30 locations (the standard fixture's 4 and 26 more) with 133 queues: the standard
 * organisation, then 26 locations of 4 or 5 queues with long names, each with a zone from ZONES.
 * Returns the added locations (the standard four have no tickets from `tickets`).
 */
export function chainOrganisation(server: TestServer, tickets: (locations: ChainLocation[]) => FixtureTicket[]): { token: string; locations: ChainLocation[] } {
  const { org, token } = server.seeded({ tickets: [] })
  const db = openTenant(server.dataDir, org.id)
  const locations: ChainLocation[] = []
  let queueCount = 5
  for (let i = 0; i < 26; i++) {
    const id = `chain_${String(i).padStart(2, '0')}`
    const location: ChainLocation = { id, name: `${TOWNS[i % TOWNS.length]} ${Math.floor(i / TOWNS.length) + 1}`, zone: ZONES[i % ZONES.length]!, queues: [] }
    db.run('INSERT INTO locations (id, name, slug, time_zone) VALUES (?, ?, ?, ?)', [id, location.name, id, location.zone])
    const count = queueCount + 5 <= 133 - (25 - i) * 4 ? 5 : 4
    for (let q = 0; q < count && queueCount < 133; q++, queueCount++) {
      const queue = { id: `${id}_q${q}`, name: ['Walk-ins', 'Appointments and scheduled returns', 'Payments', 'Passports', 'General enquiries'][q]! }
      db.run("INSERT INTO queues (id, location_id, name, slug, status) VALUES (?, ?, ?, ?, 'ACTIVE')", [queue.id, id, queue.name, queue.id])
      location.queues.push(queue)
    }
    locations.push(location)
  }
  writeTickets(db, tickets(locations))
  db.close()
  return { token, locations }
}
