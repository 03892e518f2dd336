import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import type { FixtureTicket } from '../support/fixtures.ts'
import { openTenant, type TestServer } from '../support/harness.ts'
import { VIEWPORTS, browserSetup, chromiumAvailable, openPage, screenshot, seriousViolations, setRange, useToken, type ViewportName } from './support.ts'

/**
 * The charts in real Chromium, with the browser in a zone far from UTC (Auckland, UTC+13 in
 * March): every table's numbers are computed here, independently, from the rows the test wrote.
 */

const FAR_ZONE = 'Pacific/Auckland'
const OTHER_ZONE = 'America/New_York'
const FROM = '2026-03-01'
const TO = '2026-04-10'
const STATUSES = ['WAITING', 'CALLED', 'COMPLETED', 'CANCELED', 'SKIPPED', 'NO_SHOW'] as const
const OUTCOMES = ['COMPLETED', 'NO_SHOW', 'CANCELED', 'SKIPPED'] as const
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
const STATUS_WORDS = ['Waiting', 'Called', 'Completed', 'Canceled', 'Skipped', 'No-show']
const OUTCOME_WORDS = ['Completed', 'No-show', 'Canceled', 'Skipped']
/** The locations' names as the page shows them: two share "Amsterdam Centraal" and get their slugs. */
const LOCATIONS: Record<string, string> = { loc_a: 'Amsterdam Centraal (amsterdam)', loc_a2: 'Amsterdam Centraal (amsterdam-2)', loc_b: 'Zürich Hauptbahnhof' }
const QUEUES = [
  { queueId: 'q_pay', locationId: 'loc_a', name: 'Payments' },
  { queueId: 'q_id', locationId: 'loc_a', name: 'ID & Passports' },
  { queueId: 'q_zh', locationId: 'loc_b', name: 'Schalter 1 — Ämter' },
  { queueId: 'q_a2', locationId: 'loc_a2', name: 'General' },
  // A second "Payments", in Zürich: never counted with Amsterdam's.
  { queueId: 'q_pay_zh', locationId: 'loc_b', name: 'Payments' },
]

/** An organisation of the standard fixture plus Zürich's own "Payments" queue, with `tickets`. */
function organisationWithTwoPayments(server: TestServer, tickets: FixtureTicket[]): string {
  const { org, token } = server.seeded({ tickets })
  const db = openTenant(server.dataDir, org.id)
  db.run("INSERT INTO queues (id, location_id, name, slug, status) VALUES ('q_pay_zh', 'loc_b', 'Payments', 'payments', 'ACTIVE')")
  db.close()
  return token
}

/** A small seeded generator (mulberry32), so the rows are the same on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A ticket every 20 minutes from two days before the range to two days after it (so both
 * zones' edges are crossed), each with a queue, status and wait drawn at random. Three a
 * UTC hour: a local day has 3 × its hours, 69 on a 23-hour day and 75 on a 25-hour one.
 */
function ticketsOfTheRange(): FixtureTicket[] {
  const next = random(27)
  const tickets: FixtureTicket[] = []
  const start = Date.parse('2026-02-27T00:00:00Z')
  const end = Date.parse('2026-04-13T00:00:00Z')
  for (let at = start, i = 0; at < end; at += 20 * 60_000, i++) {
    const queue = QUEUES[Math.floor(next() * QUEUES.length)]!
    const status = STATUSES[Math.floor(next() * STATUSES.length)]!
    const created = new Date(at).toISOString()
    const waitMs = Math.floor(next() * 45 * 60) * 1000 + (next() < 0.2 ? 7 : 0) // whole seconds, a few with milliseconds
    const called = status === 'WAITING' || status === 'CANCELED' ? null : new Date(at + waitMs).toISOString()
    const serviceMs = (1 + Math.floor(next() * 40)) * 30_000 // half a minute to 20 minutes
    const ended = called ? new Date(at + waitMs + serviceMs).toISOString() : new Date(at + 120_000).toISOString()
    tickets.push({
      id: `c-${String(i).padStart(5, '0')}`, number: i, queueId: queue.queueId, locationId: queue.locationId, status, createdAt: created,
      calledAt: called,
      completedAt: status === 'COMPLETED' ? ended : null,
      cancelledAt: status === 'CANCELED' ? ended : null,
      skippedAt: status === 'SKIPPED' ? ended : null,
      noShowAt: status === 'NO_SHOW' ? ended : null,
    })
  }
  return tickets
}

/** Local day, hour and weekday of an instant in a zone, read with Intl (not the page's code). */
function local(iso: string, zone: string): { day: string; hour: number; weekday: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23', weekday: 'short' })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  )
  return { day: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour), weekday: parts.weekday! }
}

/** numpy's default percentile (linear between ranks), as DuckDB's quantile_cont. */
function quantile(sorted: number[], q: number): number {
  const position = q * (sorted.length - 1)
  const low = Math.floor(position)
  const high = Math.ceil(position)
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low)
}
const minutes = (ms: number) => (Math.round(ms / 6000) / 10).toFixed(1)
const share = (part: number, whole: number) => (Math.round((1000 * part) / whole) / 10).toFixed(1)

type Table = string[][]

/** The four tables as the page must show them (header row first) for the rows of [FROM, TO] in `zone`. */
function expectedTables(tickets: FixtureTicket[], zone: string): Record<string, Table> {
  const inRange = tickets.map((ticket) => ({ ...ticket, ...local(ticket.createdAt, zone) })).filter((ticket) => ticket.day >= FROM && ticket.day <= TO)
  const days: string[] = []
  for (let day = Date.parse(`${FROM}T00:00:00Z`); day <= Date.parse(`${TO}T00:00:00Z`); day += 86_400_000) days.push(new Date(day).toISOString().slice(0, 10))
  const perDay = days.map((day) => {
    const counts = STATUSES.map((status) => inRange.filter((t) => t.status === status && t.day === day).length)
    return [day, ...counts.map(String), String(counts.reduce((a, b) => a + b, 0))]
  })
  const byPlace = (a: string[], b: string[]) => a[0]!.localeCompare(b[0]!) || a[1]!.localeCompare(b[1]!)
  const waits = QUEUES.map(({ queueId, locationId, name }) => {
    const sorted = inRange.filter((t) => t.queueId === queueId && t.calledAt).map((t) => Date.parse(t.calledAt!) - Date.parse(t.createdAt)).sort((a, b) => a - b)
    return sorted.length === 0 ? null : [LOCATIONS[locationId]!, name, String(sorted.length), minutes(quantile(sorted, 0.5)), minutes(quantile(sorted, 0.9))]
  }).filter((row) => row !== null).sort(byPlace)
  const arrivals = Array.from({ length: 24 }, (_, hour) => {
    const counts = WEEKDAYS.map((weekday) => inRange.filter((t) => t.hour === hour && t.weekday === weekday).length)
    return [String(hour), ...counts.map(String), String(inRange.filter((t) => t.hour === hour).length)]
  })
  const outcomes = QUEUES.map(({ queueId, locationId, name }) => {
    const counts = OUTCOMES.map((status) => inRange.filter((t) => t.queueId === queueId && t.status === status).length)
    const total = counts.reduce((a, b) => a + b, 0)
    return total === 0 ? null : [LOCATIONS[locationId]!, name, ...counts.map((count) => share(count, total)), String(total)]
  }).filter((row) => row !== null).sort(byPlace)
  const perLocation = Object.entries(LOCATIONS).map(([locationId, name]) => {
    const counts = STATUSES.map((status) => inRange.filter((t) => t.locationId === locationId && t.status === status).length)
    return [name, ...counts.map(String), String(counts.reduce((a, b) => a + b, 0))]
  }).filter((row) => row.at(-1) !== '0').sort((a, b) => a[0]!.localeCompare(b[0]!))
  // Service time (completed after a call) and the share called within 10 minutes, per queue and per location (pooled).
  const service = (rows: typeof inRange) => rows.filter((t) => t.status === 'COMPLETED' && t.calledAt && t.completedAt).map((t) => Date.parse(t.completedAt!) - Date.parse(t.calledAt!)).sort((a, b) => a - b)
  const serviceRow = (sorted: number[]) => [String(sorted.length), minutes(quantile(sorted, 0.5)), minutes(quantile(sorted, 0.9))]
  const targetRow = (rows: typeof inRange) => {
    const called = rows.filter((t) => t.calledAt)
    const within = called.filter((t) => Date.parse(t.calledAt!) - Date.parse(t.createdAt) <= 10 * 60_000).length
    return [String(called.length), String(within), share(within, called.length)]
  }
  const ofLocation = (id: string) => inRange.filter((t) => t.locationId === id)
  const ofQueue = (id: string) => inRange.filter((t) => t.queueId === id)
  const locationRows = (row: (id: string) => string[] | null) => Object.entries(LOCATIONS).map(([id, name]) => (row(id) ? [name, ...row(id)!] : null)).filter((r) => r !== null).sort((a, b) => a[0]!.localeCompare(b[0]!))
  const queueRows = (row: (id: string) => string[] | null) => QUEUES.map(({ queueId, locationId, name }) => (row(queueId) ? [LOCATIONS[locationId]!, name, ...row(queueId)!] : null)).filter((r) => r !== null).sort(byPlace)
  const serviceOf = (rows: typeof inRange) => (service(rows).length ? serviceRow(service(rows)) : null)
  const targetOf = (rows: typeof inRange) => (rows.some((t) => t.calledAt) ? targetRow(rows) : null)
  return {
    'Service time by location': [['Location', 'Completed tickets', 'Median service (min)', '90th percentile (min)'], ...locationRows((id) => serviceOf(ofLocation(id)))],
    'Service time by queue': [['Location', 'Queue', 'Completed tickets', 'Median service (min)', '90th percentile (min)'], ...queueRows((id) => serviceOf(ofQueue(id)))],
    'Called within 10 min by location': [['Location', 'Called tickets', 'Within 10 min', 'Share (%)'], ...locationRows((id) => targetOf(ofLocation(id)))],
    'Called within 10 min by queue': [['Location', 'Queue', 'Called tickets', 'Within 10 min', 'Share (%)'], ...queueRows((id) => targetOf(ofQueue(id)))],
    'Tickets per day': [['Day', ...STATUS_WORDS, 'Total'], ...perDay],
    'Tickets by location': [['Location', ...STATUS_WORDS, 'Total'], ...perLocation],
    'Wait by queue': [['Location', 'Queue', 'Called tickets', 'Median wait (min)', '90th percentile (min)'], ...waits],
    'Arrivals by hour': [['Hour', ...WEEKDAYS, 'All days'], ...arrivals],
    'Outcome by queue': [['Location', 'Queue', ...OUTCOME_WORDS, 'Total'], ...outcomes],
  }
}

/** A per-day table (header row first) summed per week from Monday, with the days each week has in the range. */
function weeksOf(perDay: Table): Table {
  const weeks = new Map<string, number[]>()
  for (const [day, ...counts] of perDay.slice(1)) {
    const date = new Date(`${day}T00:00:00Z`)
    const monday = new Date(date.getTime() - ((date.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10)
    const sums = weeks.get(monday) ?? new Array<number>(counts.length + 1).fill(0)
    sums[0]!++
    counts.forEach((count, i) => (sums[i + 1]! += Number(count)))
    weeks.set(monday, sums)
  }
  return [['Week (from Monday)', 'Days in range', ...STATUS_WORDS, 'Total'], ...[...weeks].map(([monday, sums]) => [monday, ...sums.map(String)])]
}

/** Every numbers table on the page by its caption, header row first (read from the DOM, shown or not). */
function shownTables(page: Page): Promise<Record<string, Table>> {
  return page.locator('#charts-list table').evaluateAll((tables) =>
    Object.fromEntries(
      tables.map((table) => [
        table.querySelector('caption')!.textContent!,
        [...table.querySelectorAll('tr')].map((row) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent!)),
      ]),
    ),
  )
}

/** Collects console errors and uncaught exceptions of a page. */
function consoleErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  return errors
}

async function drawCharts(page: Page) {
  await page.getByRole('button', { name: 'Charts' }).click()
  await page.getByText(/^Charts drawn from/).waitFor()
}

describe.skipIf(!chromiumAvailable)('the charts', () => {
  const setup = browserSetup({ server: {}, limited: { rateLimitPerMinute: 2 } })
  const tickets = ticketsOfTheRange()

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    const viewport = VIEWPORTS[size]
    test(`${size}: in ${FAR_ZONE}, every table equals the rows' numbers; switching to ${OTHER_ZONE} recomputes them`, async () => {
      const token = organisationWithTwoPayments(setup.server, tickets)
      const { page, requests } = await openPage(setup.browser, setup.server.base, { viewport, timezoneId: FAR_ZONE })
      const errors = consoleErrors(page)
      // The browser's zone is the default, and the page says the days are its days.
      expect(await page.getByLabel('Time zone').inputValue()).toBe(FAR_ZONE)
      expect(await page.locator('#zone-help').textContent()).toContain(`Days are local days in ${FAR_ZONE} (UTC+1`)
      await useToken(page, token)
      await page.getByRole('checkbox', { name: 'Payments' }).first().waitFor()
      await setRange(page, FROM, TO)
      await drawCharts(page)

      // The request's bounds are the zone's midnights: 1 March 00:00 in Auckland is 28 Feb 11:00 UTC.
      const exports = requests.filter((url) => url.includes('/v1/exports/tickets.csv'))
      expect(exports).toHaveLength(1)
      expect(exports[0]).toContain('from=2026-02-28T11%3A00%3A00.000Z')
      expect(exports[0]).toContain('to=2026-04-10T12%3A00%3A00.000Z') // 11 April 00:00 NZST (UTC+12, after 5 April)

      const shown = await shownTables(page)
      expect(shown).toEqual(expectedTables(tickets, FAR_ZONE))
      // The two Payments queues are two rows, each labelled with its location in the picture too.
      expect(shown['Wait by queue']!.filter((row) => row[1] === 'Payments').map((row) => row[0])).toEqual(['Amsterdam Centraal (amsterdam)', 'Zürich Hauptbahnhof'])
      expect(await page.locator('#chart-wait svg').textContent()).toContain('Zürich Hauptbahnhof · Payments')
      // The legends use the form's words.
      expect(await page.locator('#chart-outcome [class$="-swatch"]').allTextContents()).toContain('No-show')
      expect(await page.locator('#chart-outcome').textContent()).not.toContain('NO_SHOW')
      // 5 April 2026 in Auckland has 25 hours (03:00 NZDT becomes 02:00 NZST): 25 × 3 tickets.
      const perDay = (table: Table, day: string) => table.find((row) => row[0] === day)!.at(-1)
      expect(perDay(shown['Tickets per day']!, '2026-04-05')).toBe('75')
      expect(perDay(shown['Tickets per day']!, '2026-04-04')).toBe('72')

      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width)
      expect(await page.locator('#charts-list svg').count()).toBeGreaterThanOrEqual(4)
      for (const title of ['Tickets per day', 'Wait by queue', 'Arrivals by hour', 'Outcome by queue']) {
        await page.getByRole('heading', { name: title }).waitFor()
      }
      // The numbers open by keyboard: Tab to the first "Show numbers", Enter.
      await page.getByText('Show numbers').first().focus()
      await page.keyboard.press('Enter')
      await page.getByRole('table', { name: 'Tickets per day' }).waitFor()
      expect(await seriousViolations(page)).toEqual([])
      await page.locator('#charts-section').scrollIntoViewIfNeeded()
      await screenshot(page, `charts-${viewport.width}x${viewport.height}`)

      // The CSV download of a chart's numbers holds the table's rows.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download these numbers (CSV)' }).nth(2).click()])
      expect(download.suggestedFilename()).toBe('wait_20260301-20260410_Pacific-Auckland.csv')
      // Starting with a UTF-8 byte-order mark (kept by ignoreBOM), as every file the page writes itself.
      const csv = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await Bun.file((await download.path())!).bytes())
      expect(csv).toBe('\uFEFF' + shown['Wait by queue']!.map((row) => row.map((field) => (/[",]/.test(field) ? `"${field}"` : field)).join(',') + '\r\n').join(''))

      // Per week: local weeks from Monday, their days in the range said, summed from the days above.
      await page.getByLabel('Per week').check()
      await page.getByRole('heading', { name: 'Tickets per week' }).waitFor()
      expect((await shownTables(page))['Tickets per week']).toEqual(weeksOf(shown['Tickets per day']!))

      // Another zone: the same local days now mean other instants, and every number follows.
      await page.getByLabel('Time zone').fill(OTHER_ZONE)
      await page.getByLabel('Time zone').press('Enter')
      await page.getByText(`Charts drawn from`).filter({ hasText: OTHER_ZONE }).waitFor()
      const switched = await shownTables(page)
      expect(switched).toEqual(expectedTables(tickets, OTHER_ZONE))
      // 8 March 2026 in New York has 23 hours (02:00 EST becomes 03:00 EDT).
      expect(perDay(switched['Tickets per day']!, '2026-03-08')).toBe('69')
      expect(requests.filter((url) => url.includes('/v1/exports/tickets.csv')).at(-1)).toContain('from=2026-03-01T05%3A00%3A00.000Z')
      expect(await page.locator('#zone-help').textContent()).toContain(`Days are local days in ${OTHER_ZONE}`)

      // The zone is kept for the tab, as the token is.
      await page.reload()
      expect(await page.getByLabel('Time zone').inputValue()).toBe(OTHER_ZONE)
      expect(errors).toEqual([])
      await page.context().close()
    })
  }

  test('a range without tickets draws empty charts that say so', async () => {
    const { token } = setup.server.seeded({ tickets })
    const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: FAR_ZONE })
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2025-01-01', '2025-01-07')
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/No tickets match: the charts are empty/).waitFor()
    for (const sentence of ['No ticket of the selection was created in this range: every day counts 0.', 'No ticket in this range was called', 'every hour counts 0', 'No ticket in this range has ended']) {
      await page.getByText(sentence).waitFor()
    }
    const shown = await shownTables(page)
    expect(shown['Tickets per day']!.slice(1).map((row) => row.at(-1))).toEqual(['0', '0', '0', '0', '0', '0', '0'])
    expect(shown['Wait by queue']).toHaveLength(1) // the header row alone
    expect(await seriousViolations(page)).toEqual([])
    await page.context().close()
  })

  test('an unknown zone is refused with a sentence, and the days stay in the zone in use', async () => {
    const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: FAR_ZONE })
    await page.getByLabel('Time zone').fill('Mars/Olympus_Mons')
    await page.getByLabel('Time zone').press('Enter')
    await page.getByRole('alert').filter({ hasText: `“Mars/Olympus_Mons” is not a time zone this browser knows.` }).waitFor()
    expect(await page.getByLabel('Time zone').getAttribute('aria-invalid')).toBe('true')
    expect(await page.locator('#zone-help').textContent()).toContain(`local days in ${FAR_ZONE}`)
    expect(await page.evaluate(() => sessionStorage.getItem('queue-analytics-zone'))).toBeNull()
    // A known zone typed in another case is taken under its canonical name.
    await page.getByLabel('Time zone').fill('europe/amsterdam')
    await page.getByLabel('Time zone').press('Enter')
    expect(await page.locator('#zone-help').textContent()).toMatch(/^Days are local days in Europe\/Amsterdam \(UTC\+0[12]:00 now\)/)
    // A valid alias is kept as typed (Chromium resolves Asia/Kolkata to Asia/Calcutta).
    await page.getByLabel('Time zone').fill('Asia/Kolkata')
    await page.getByLabel('Time zone').press('Enter')
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Asia/Kolkata')
    expect(await page.locator('#zone-help').textContent()).toStartWith('Days are local days in Asia/Kolkata (UTC+05:30 now)')
    expect(await page.evaluate(() => sessionStorage.getItem('queue-analytics-zone'))).toBe('Asia/Kolkata')
    expect(await page.getByRole('alert').count()).toBe(0)
    await page.context().close()
  })

  test('a 401 (token revoked), a 402 (feature turned off) and a 429 of the charts are explained as the export explains them', async () => {
    const { org } = setup.server.seeded({ tickets })
    const revoked = setup.server.token(org.id)
    const { page } = await openPage(setup.browser, setup.server.base)
    await useToken(page, revoked.token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    setup.server.app.store.revokeToken(revoked.id, new Date().toISOString())
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByRole('alert').filter({ hasText: /token was not accepted/ }).waitFor()
    expect(await page.locator('#token-status').textContent()).toBe('No token in use.')
    expect(await page.locator('#charts-section').isVisible()).toBe(false)

    const other = setup.server.seeded()
    await useToken(page, other.token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    setup.server.app.store.updateOrganisation(other.org.id, { apiEnabled: false })
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByRole('alert').filter({ hasText: /API feature is not enabled/ }).waitFor()
    await page.context().close()

    const limited = await openPage(setup.browser, setup.limited.base)
    await useToken(limited.page, setup.limited.seeded().token) // request 1
    await limited.page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(limited.page, '2026-03-01', '2026-03-04')
    await drawCharts(limited.page) // request 2
    await limited.page.getByRole('button', { name: 'Charts' }).click() // request 3: 429
    await limited.page.getByRole('alert').filter({ hasText: /Too many requests in the last minute\. You can try again in \d+ seconds?\./ }).waitFor()
    await limited.page.context().close()
  })

  test('a range over 90 days is read window by window with progress; Cancel stops it, and nothing is drawn; the form changed meanwhile changes nothing drawn', async () => {
    // 30 000 tickets, one every 5 minutes from 1 January 2026: into April, past the first window of 90 days.
    const { token } = setup.server.seeded({ bulk: { count: 30_000, start: '2026-01-01', everySeconds: 300 } })
    const { page, requests } = await openPage(setup.browser, setup.server.base)
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-01-01', '2026-05-31')
    // The second window's request is held until the test lets it go: the worker is then mid-range.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.context().route(/\/v1\/exports\/tickets\.csv\?from=2026-04-01/, async (route) => {
      await held
      await route.continue().catch(() => undefined) // aborted meanwhile by Cancel
    })
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/Reading tickets for the charts: 25,920 so far/).waitFor() // 90 days × 288 a day
    expect(await page.locator('#progress-bar').isVisible()).toBe(true)
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.getByRole('alert').filter({ hasText: 'The charts were cancelled; nothing was drawn.' }).waitFor()
    release()
    expect(await page.locator('#charts-section').isVisible()).toBe(false)
    expect(await page.getByRole('button', { name: 'Charts' }).isEnabled()).toBe(true)

    // Asked again and let through: both windows, every ticket of the range counted once.
    await page.context().unroute(/\/v1\/exports\/tickets\.csv\?from=2026-04-01/)
    await drawCharts(page)
    const windows = requests.filter((url) => url.includes('/v1/exports/tickets.csv'))
    expect(windows.slice(-2).map((url) => new URL(url).searchParams.get('from'))).toEqual(['2026-01-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'])
    const perDay = (await shownTables(page))['Tickets per day']!.slice(1)
    expect(perDay).toHaveLength(151)
    expect(perDay.reduce((sum, row) => sum + Number(row.at(-1)), 0)).toBe(30_000)

    // Dates changed in the form while the tickets are read: the charts, their summary and the
    // names of their CSV files all keep to the range that was asked for.
    const asked = await page.locator('#charts-summary').textContent()
    const again = new Promise<void>((resolve) => (release = resolve))
    await page.context().route(/\/v1\/exports\/tickets\.csv\?from=2026-04-01/, async (route) => {
      await again
      await route.continue()
    })
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/Reading tickets for the charts: 25,920 so far/).waitFor()
    await setRange(page, '2026-02-01', '2026-02-10')
    await page.getByRole('checkbox', { name: 'Payments' }).check()
    release()
    await page.getByText(/^Charts drawn from 30,000 tickets/).waitFor()
    expect(await page.locator('#charts-summary').textContent()).toBe(asked)
    expect(asked).toContain('1 Jan – 31 May 2026')
    const [numbersFile] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download these numbers (CSV)' }).first().click()])
    expect(numbersFile.suggestedFilename()).toMatch(/^[a-z-]+_20260101-20260531_/)
    await page.context().close()
  })
})
