import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { writeLocationZones, type FixtureTicket } from '../support/fixtures.ts'
import { openTenant } from '../support/harness.ts'
import { browserSetup, chromiumAvailable, openPage, seriousViolations, setRange, useToken } from './support.ts'

/**
 * "Each location in its own time": Amsterdam's tickets in Amsterdam's days and hours, Zürich's
 * (here moved to New York) in New York's, and the locations without a zone in the chosen one
 * (the browser's, Asia/Tokyo). Every table is computed here independently, with Intl, from the
 * rows the test wrote; the range crosses New York's change to summer time (8 March).
 */

const SIZES = { laptop: { width: 1366, height: 768 }, phone: { width: 390, height: 844 } } as const
const CHOSEN = 'Asia/Tokyo'
const ZONES: Record<string, string | null> = { loc_a: 'Europe/Amsterdam', loc_b: 'America/New_York', loc_a2: null, loc_empty: null }
const NAMES: Record<string, string> = { loc_a: 'Amsterdam Centraal (amsterdam)', loc_a2: 'Amsterdam Centraal (amsterdam-2)', loc_b: 'Zürich Hauptbahnhof' }
const QUEUES = [['q_pay', 'loc_a'], ['q_id', 'loc_a'], ['q_zh', 'loc_b'], ['q_a2', 'loc_a2']] as const
const STATUSES = ['WAITING', 'CALLED', 'COMPLETED', 'CANCELED', 'SKIPPED', 'NO_SHOW'] as const
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
const FROM = '2026-03-07'
const TO = '2026-03-12'

/** A ticket every 37 minutes from 5 to 15 March (UTC), queues and statuses in turn. */
function tickets(): FixtureTicket[] {
  const out: FixtureTicket[] = []
  for (let at = Date.parse('2026-03-05T00:00:00Z'), i = 0; at < Date.parse('2026-03-15T00:00:00Z'); at += 37 * 60_000, i++) {
    const [queueId, locationId] = QUEUES[i % QUEUES.length]!
    out.push({ id: `z-${i}`, number: i, queueId, locationId, status: STATUSES[(i * 7) % STATUSES.length]!, createdAt: new Date(at).toISOString() })
  }
  return out
}

/** Local day, hour and weekday of an instant in a zone, with Intl (not the page's code). */
function local(iso: string, zone: string): { day: string; hour: number; weekday: string; time: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', weekday: 'short' })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  )
  return { day: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour), weekday: parts.weekday!, time: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}` }
}

function expected(rows: FixtureTicket[]) {
  const inRange = rows.map((t) => ({ ...t, zone: ZONES[t.locationId] ?? CHOSEN })).map((t) => ({ ...t, ...local(t.createdAt, t.zone) })).filter((t) => t.day >= FROM && t.day <= TO)
  const days = Array.from({ length: 6 }, (_, i) => new Date(Date.parse(`${FROM}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10))
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)
  return {
    inRange,
    perDay: days.map((day) => {
      const counts = STATUSES.map((status) => inRange.filter((t) => t.day === day && t.status === status).length)
      return [day, ...counts.map(String), String(sum(counts))]
    }),
    perLocation: Object.entries(NAMES).map(([id, name]) => {
      const counts = STATUSES.map((status) => inRange.filter((t) => t.locationId === id && t.status === status).length)
      return [name, ...counts.map(String), String(sum(counts))]
    }).sort((a, b) => a[0]!.localeCompare(b[0]!)),
    arrivals: Array.from({ length: 24 }, (_, hour) => {
      const counts = WEEKDAYS.map((weekday) => inRange.filter((t) => t.hour === hour && t.weekday === weekday).length)
      return [String(hour), ...counts.map(String), String(sum(counts))]
    }),
  }
}

/** A table's body rows by its caption. */
function tableRows(page: Page, caption: string): Promise<string[][]> {
  return page.locator('#charts-list table').filter({ has: page.locator('caption', { hasText: caption }) }).first().locator('tbody tr').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent!)))
}

describe.skipIf(!chromiumAvailable)('each location in its own time', () => {
  const setup = browserSetup({ server: {} })
  const rows = tickets()
  const want = expected(rows)

  for (const [size, viewport] of Object.entries(SIZES)) {
    test(`${size}: days, hours, totals and the names file in each location's zone, the others in the chosen one`, async () => {
      const { org, token } = setup.server.seeded({ tickets: rows })
      const db = openTenant(setup.server.dataDir, org.id)
      writeLocationZones(db, ZONES)
      db.close()
      const { page, requests } = await openPage(setup.browser, setup.server.base, { viewport, timezoneId: CHOSEN })
      await useToken(page, token)
      await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
      await setRange(page, FROM, TO)
      expect(await page.locator('#day-zone-help').textContent()).toBe(`Days and hours are ${CHOSEN}'s for every location (2 of 4 locations have a time zone of their own).`)
      await page.getByLabel("In each location's own").check()
      expect(await page.locator('#day-zone-help').textContent()).toBe(`Days and hours are each location's own: 4 locations in 3 time zones; 2 without one of their own use ${CHOSEN}.`)

      await page.getByRole('button', { name: 'Charts', exact: true }).click()
      await page.locator('#progress').filter({ hasText: /^(Charts drawn from|No tickets)/ }).waitFor()
      expect(await page.locator('#progress').textContent()).toBe(`Charts drawn from ${want.inRange.length} tickets (days in each location's own).`)
      // The export asked for runs from the earliest local midnight (Tokyo's) to the latest (New York's, in summer time).
      const asked = new URL(requests.filter((url) => url.includes('/v1/exports/tickets.csv')).at(-1)!)
      expect([asked.searchParams.get('from'), asked.searchParams.get('to')]).toEqual(['2026-03-06T15:00:00.000Z', '2026-03-13T04:00:00.000Z'])
      expect(await tableRows(page, 'Tickets per day (each location in its own time)')).toEqual(want.perDay)
      expect(await tableRows(page, 'Tickets by location')).toEqual(want.perLocation)
      expect(await tableRows(page, 'Arrivals by hour (each location in its own time)')).toEqual(want.arrivals)
      expect(await page.locator('#chart-arrivals').textContent()).toContain("Each location's tickets in its own local days and hours, summed")
      expect(await page.locator('#charts-summary').textContent()).toContain(`days in each location's own time zone (4 locations in 3 time zones; 2 without one of their own use ${CHOSEN})`)
      expect(await seriousViolations(page)).toEqual([])

      // The names file: each row's local times in its location's zone, said in localTimeZone (and whose, in localTimeZoneFrom); only the rows of its own days.
      await page.getByLabel('Add names and local times').check()
      // The hints follow the choice: the file's name (it ends at the latest location's midnight), its days, whose zones.
      expect(await page.locator('#to-help').textContent()).toContain("(the latest location's) (…_20260313T040000Z_names_each-location.csv)")
      expect(await page.locator('#range-help').textContent()).toStartWith("At most 89 days per file in each location's own time")
      expect(await page.locator('#with-names-hint').textContent()).toContain("each time in its location's own time zone, with localTimeZone and localTimeZoneFrom")
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
      expect(download.suggestedFilename()).toEndWith('_names_each-location.csv')
      const lines = (await Bun.file((await download.path())!).text()).replace(/^\uFEFF/, '').trimEnd().split('\r\n')
      const header = lines[0]!.split(',')
      const at = (name: string) => header.indexOf(name)
      const file = lines.slice(1).map((line) => line.split(','))
      expect(file.map((cells) => cells[at('id')]).sort()).toEqual(want.inRange.map((t) => t.id).sort())
      for (const cells of file) {
        const ticket = want.inRange.find((t) => t.id === cells[at('id')])!
        // A location without a zone of its own has the chosen zone's times: localTimeZoneFrom says so.
        expect([cells[at('createdAtLocal')], cells[at('localTimeZone')], cells[at('localTimeZoneFrom')]]).toEqual([ticket.time, ticket.zone, ZONES[ticket.locationId] ? 'location' : 'chosen'])
      }

      // 90 of each location's days span more than the API's 90: said in the summary before Download, refused by it,
      // and the refusal gone once the range is mended to 89.
      const alert = page.locator('#range-message')
      await setRange(page, '2025-12-13', TO)
      expect(await page.locator('#summary').textContent()).toContain("In each location's own time a file covers at most 89 days")
      await page.getByRole('button', { name: 'Download CSV' }).click()
      await alert.filter({ hasText: 'one file covers at most 89 such days' }).waitFor()
      expect(await page.getByLabel('To (included)', { exact: true }).getAttribute('aria-invalid')).toBe('true')
      await page.getByLabel('From', { exact: true }).fill('2025-12-14')
      expect(await alert.isHidden()).toBe(true)
      expect(await page.getByLabel('To (included)', { exact: true }).getAttribute('aria-invalid')).toBeNull()
      expect(await page.locator('#summary').textContent()).toStartWith('Will export:')
      await page.context().close()
    })
  }
})
