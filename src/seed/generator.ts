import type { Database } from 'bun:sqlite'
import { Random } from './random.ts'

/**
 * Demo data that looks like a real business on a BI dashboard: 2–5 locations with opening hours,
 * several queues each (one of them no longer ACTIVE), arrivals that peak at lunch and on some
 * weekdays, waiting and service times that vary by queue, one device session per desk per open
 * day calling the tickets, plausible shares of the six statuses (WAITING and CALLED only near
 * `now`), and the personal columns filled, because the API must prove it never serves them.
 */

export interface SeedOptions {
  days: number
  /** Average tickets per open day across the organisation. */
  perDay: number
  seed: string
  /** The end of the generated history (epoch ms); tickets are created before it. */
  now: number
}

export interface SeedResult {
  locations: number
  queues: number
  deviceSessions: number
  tickets: number
}

const CITIES = ['Amsterdam', 'Lisbon', 'Ghent', 'Porto', 'Utrecht', 'Lyon', 'Malmö', 'Zürich', 'Kraków', 'Ljubljana']
/** Each city's IANA zone, written to `locations.time_zone` (Lisbon and Porto an hour behind the others). */
const CITY_ZONES: Record<string, string> = {
  Amsterdam: 'Europe/Amsterdam', Lisbon: 'Europe/Lisbon', Ghent: 'Europe/Brussels', Porto: 'Europe/Lisbon', Utrecht: 'Europe/Amsterdam',
  Lyon: 'Europe/Paris', Malmö: 'Europe/Stockholm', Zürich: 'Europe/Zurich', Kraków: 'Europe/Warsaw', Ljubljana: 'Europe/Ljubljana',
}
const SITES = ['Central', 'Harbour', 'Station', 'Old Town', 'North', 'Riverside']
const QUEUE_KINDS = [
  { name: 'General enquiries', wait: 12, service: 6 },
  { name: 'Passports & ID', wait: 25, service: 14 },
  { name: 'Payments', wait: 8, service: 4 },
  { name: 'Returns', wait: 10, service: 7 },
  { name: 'Appointments', wait: 5, service: 18 },
  { name: 'Business desk', wait: 15, service: 12 },
]
const FIRST_NAMES = ['Ana', 'Bram', 'Chloé', 'Dmitri', 'Eva', 'Farid', 'Greta', 'Hugo', 'Inês', 'Jonas', 'Katarzyna', 'Lars', 'Mei', 'Noah', 'Olga', 'Pieter']
const LAST_NAMES = ['de Vries', 'Silva', 'Janssens', 'Costa', 'Bakker', 'Martin', 'Nilsson', 'Keller', 'Nowak', 'Horvat']
const NOTES = ['needs wheelchair access', 'brought the wrong form', 'asked for an interpreter', 'second visit this week', 'VIP, call politely']

/** Relative arrival intensity per hour of the day (UTC): a morning rise and a lunch peak. */
const HOURLY = [0, 0, 0, 0, 0, 0, 0, 0.3, 0.8, 1.0, 1.1, 1.4, 1.9, 1.7, 1.1, 1.0, 0.9, 0.7, 0.4, 0.1, 0, 0, 0, 0]
/** Relative intensity per weekday (0 = Sunday): busy Mondays and Fridays, quiet weekends. */
const WEEKDAY = [0.25, 1.35, 1.0, 0.95, 1.05, 1.3, 0.6]

const slug = (text: string) => text.toLowerCase().normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
const iso = (ms: number) => new Date(ms).toISOString()

/** Writes the generated data into an empty tenant file in one transaction. */
export function generateTenantData(db: Database, options: SeedOptions): SeedResult {
  const random = new Random(options.seed)
  const dayMs = 86_400_000
  const minute = 60_000
  const endDay = Math.floor(options.now / dayMs) * dayMs
  const startDay = endDay - (options.days - 1) * dayMs

  // A file held below version 5 (`admin seed --replace` over rows that broke the contract) has
  // no time_zone yet: writeSeededZones gives the zones once it is migrated.
  const zoned = hasZoneColumn(db)
  const insertLocation = db.prepare(zoned ? 'INSERT INTO locations (id, name, slug, time_zone) VALUES (?, ?, ?, ?)' : 'INSERT INTO locations (id, name, slug) VALUES (?, ?, ?)')
  const insertQueue = db.prepare('INSERT INTO queues (id, location_id, name, slug, status) VALUES (?, ?, ?, ?, ?)')
  const insertSession = db.prepare('INSERT INTO device_sessions (id, location_id, device_name, started_at, ended_at) VALUES (?, ?, ?, ?, ?)')
  const insertTicket = db.prepare(
    `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, called_at, completed_at, cancelled_at,
       skipped_at, no_show_at, called_by_device_session_id, customer_name, notes, party_size, bearer_hash)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )

  const result: SeedResult = { locations: 0, queues: 0, deviceSessions: 0, tickets: 0 }
  db.transaction(() => {
    const locationCount = random.int(2, 5)
    const cities = [...CITIES].sort(() => random.next() - 0.5).slice(0, locationCount)
    const locations = cities.map((city) => {
      const name = `${city} ${random.pick(SITES)}`
      const location = {
        id: random.id('loc_'),
        name,
        opensSunday: random.chance(0.2),
        closesSaturdayAt: random.pick([13, 14, 17]),
        desks: random.int(1, 3),
        weight: 0.5 + random.next(),
        queues: [] as { id: string; wait: number; service: number; weight: number; activeUntil: number }[],
      }
      insertLocation.run(...([location.id, name, slug(name)] as const), ...(zoned ? [CITY_ZONES[city]!] : []))
      result.locations++
      const kinds = [...QUEUE_KINDS].sort(() => random.next() - 0.5).slice(0, random.int(2, 4))
      for (const kind of kinds) {
        location.queues.push({ id: random.id('que_'), wait: kind.wait, service: kind.service, weight: 0.3 + random.next(), activeUntil: Infinity })
        insertQueue.run(location.queues.at(-1)!.id, location.id, kind.name, slug(kind.name), 'ACTIVE')
        result.queues++
      }
      return location
    })
    // One queue was closed half-way through the period: it keeps its history but is no longer ACTIVE.
    const closed = locations[0]!.queues.at(-1)!
    closed.activeUntil = startDay + Math.floor(options.days / 2) * dayMs
    db.prepare("UPDATE queues SET status = 'INACTIVE' WHERE id = ?").run(closed.id)

    const totalWeight = locations.reduce((sum, l) => sum + l.weight, 0)
    const peakHourly = Math.max(...HOURLY)
    const meanHourly = HOURLY.reduce((a, b) => a + b, 0)

    for (let day = startDay; day <= endDay; day += dayMs) {
      const weekday = new Date(day).getUTCDay()
      for (const location of locations) {
        if (weekday === 0 && !location.opensSunday) continue
        const closeHour = weekday === 6 ? location.closesSaturdayAt : 19
        const sessions: string[] = []
        for (let desk = 1; desk <= location.desks; desk++) {
          const id = random.id('dev_')
          const started = day + 7 * 60 * minute + random.int(30, 55) * minute
          const ended = day + closeHour * 60 * minute + random.int(0, 20) * minute
          insertSession.run(id, location.id, `Desk ${desk}`, iso(started), ended < options.now ? iso(ended) : null)
          sessions.push(id)
          result.deviceSessions++
        }
        const expected = options.perDay * (location.weight / totalWeight) * WEEKDAY[weekday]!
        const numbers = new Map<string, number>()
        // Arrivals: a Poisson process whose rate follows HOURLY, sampled by thinning.
        const peakRate = (expected / meanHourly) * peakHourly / 60 // arrivals per minute at the peak
        let t = day + 7 * 60 * minute
        const close = day + closeHour * 60 * minute
        while (peakRate > 0) {
          t += random.exponential(1 / peakRate) * minute
          if (t >= close || t >= options.now) break
          const hour = new Date(t).getUTCHours()
          if (!random.chance(HOURLY[hour]! / peakHourly)) continue
          const queues = location.queues.filter((q) => t < q.activeUntil)
          const queue = weightedPick(random, queues)
          const number = (numbers.get(queue.id) ?? 0) + 1
          numbers.set(queue.id, number)
          insertTicket.run(...ticketValues(random, queue, location.id, sessions, Math.floor(t), number, options.now))
          result.tickets++
        }
      }
    }
  })()
  return result
}

function weightedPick<T extends { weight: number }>(random: Random, items: T[]): T {
  let roll = random.next() * items.reduce((sum, item) => sum + item.weight, 0)
  for (const item of items) if ((roll -= item.weight) < 0) return item
  return items[items.length - 1]!
}

type TicketValues = [string, number, string, string, string, string, string | null, string | null, string | null, string | null, string | null, string | null, string, string | null, number, string]

function ticketValues(
  random: Random,
  queue: { id: string; wait: number; service: number },
  locationId: string,
  sessions: string[],
  createdAt: number,
  number: number,
  now: number,
): TicketValues {
  const minute = 60_000
  const waited = Math.floor(random.exponential(queue.wait * minute)) + 15_000
  const served = Math.floor(random.exponential(queue.service * minute)) + 30_000
  const calledAt = createdAt + waited
  let status = 'COMPLETED'
  let called: number | null = calledAt
  let completed: number | null = null
  let cancelled: number | null = null
  let skipped: number | null = null
  let noShow: number | null = null
  const roll = random.next()
  if (calledAt > now) {
    // Not called yet: still waiting, or gave up already.
    status = random.chance(0.9) ? 'WAITING' : 'CANCELED'
    called = null
    if (status === 'CANCELED') cancelled = createdAt + Math.floor((now - createdAt) * random.next())
  } else if (roll < 0.08) {
    status = 'CANCELED'
    called = null
    cancelled = createdAt + Math.floor(waited * random.next())
  } else if (roll < 0.14) {
    status = 'NO_SHOW'
    noShow = calledAt + random.int(2, 5) * minute
  } else if (roll < 0.18) {
    status = 'SKIPPED'
    skipped = calledAt + random.int(1, 3) * minute
  } else if (calledAt + served > now) {
    status = 'CALLED'
  } else {
    completed = calledAt + served
  }
  for (const at of [noShow, skipped]) if (at !== null && at > now) status = 'CALLED'
  if (status === 'CALLED') noShow = skipped = null
  const t = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
  return [
    random.id('tkt_', 14),
    number,
    queue.id,
    locationId,
    status,
    new Date(createdAt).toISOString(),
    t(called),
    t(completed),
    t(cancelled),
    t(skipped),
    t(noShow),
    called === null ? null : random.pick(sessions),
    `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)}`,
    random.chance(0.15) ? random.pick(NOTES) : null,
    random.int(1, 6),
    random.id('', 64),
  ]
}

function hasZoneColumn(db: Database): boolean {
  return (db.query("SELECT count(*) AS n FROM pragma_table_info('locations') WHERE name = 'time_zone'").get() as { n: number }).n === 1
}

/** Gives generated locations without a zone their city's (by the name the generator gave them); for a file migrated after generating. */
export function writeSeededZones(db: Database): void {
  if (!hasZoneColumn(db)) return
  const update = db.prepare("UPDATE locations SET time_zone = ? WHERE time_zone IS NULL AND name LIKE ? || ' %'")
  db.transaction(() => {
    for (const [city, zone] of Object.entries(CITY_ZONES)) update.run(zone, city)
  })()
}
