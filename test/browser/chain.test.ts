import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import type { FixtureTicket } from '../support/fixtures.ts'
import { chainOrganisation, type ChainLocation } from './chain-fixture.ts'
import { browserSetup, chartTextProblems, chromiumAvailable, openPage, screenshot, seriousViolations, setRange, useToken } from './support.ts'

/**
 * A chain at a glance: 30 locations and 133 queues. The filter list is searchable and folded, a
 * location's box ticks its queues, a keyboard gets from To to Charts in a few presses; charts of
 * many rows are sorted by value (said), draw 12 rows and the rest as one until asked for all,
 * have their value axis at the top too, and every label's full name is its tooltip.
 */

const SIZES = { laptop: { width: 1366, height: 768 }, phone: { width: 390, height: 844 } } as const
const DAY = '2026-03-10'

/**
 * Per queue k (in order), 3 tickets called after k, k+1 and k+2 minutes and completed: medians
 * differ per queue. Location i's completed tickets are served in 1 + (7i mod 26) minutes.
 */
function ticketsOf(locations: ChainLocation[]): FixtureTicket[] {
  const tickets: FixtureTicket[] = []
  let k = 0
  for (const [i, location] of locations.entries()) {
    const service = (1 + ((7 * i) % 26)) * 60_000
    for (const queue of location.queues) {
      for (let j = 0; j < 3; j++) {
        const created = Date.parse(`${DAY}T12:00:00Z`) + (k * 3 + j) * 1000
        const called = created + (k + j) * 60_000
        tickets.push({
          id: `${queue.id}-${j}`, number: j, queueId: queue.id, locationId: location.id, status: j === 2 && k % 2 ? 'NO_SHOW' : 'COMPLETED', createdAt: new Date(created).toISOString(),
          calledAt: new Date(called).toISOString(), completedAt: j === 2 && k % 2 ? null : new Date(called + service).toISOString(), noShowAt: j === 2 && k % 2 ? new Date(called + 60_000).toISOString() : null,
        })
      }
      k++
    }
  }
  return tickets
}

/** The value at quantile q of sorted values, interpolated linearly (as DuckDB's quantile_cont). */
function quantile(sorted: number[], q: number): number {
  const at = q * (sorted.length - 1)
  return sorted[Math.floor(at)]! + (sorted[Math.ceil(at)]! - sorted[Math.floor(at)]!) * (at - Math.floor(at))
}

/**
 * Service time and share called within 10 min per location, from the tickets themselves: the
 * rows each chart draws (12 in its order and the rest as one) and the rest's tooltip.
 */
function perLocationCharts(locations: ChainLocation[], tickets: FixtureTicket[]) {
  const name = new Map(locations.map((location) => [location.id, location.name]))
  const byLocation = Map.groupBy(tickets, (ticket) => name.get(ticket.locationId)!)
  const minutes = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 60_000
  const service = [...byLocation].map(([location, rows]) => ({ location, values: rows.filter((t) => t.status === 'COMPLETED').map((t) => minutes(t.calledAt!, t.completedAt!)).sort((a, b) => a - b) }))
  service.sort((a, b) => quantile(b.values, 0.5) - quantile(a.values, 0.5) || a.location.localeCompare(b.location))
  const pooled = service.slice(12).flatMap((row) => row.values).sort((a, b) => a - b)
  const target = [...byLocation].map(([location, rows]) => ({ location, called: rows.length, within: rows.filter((t) => minutes(t.createdAt, t.calledAt!) <= 10).length }))
  target.sort((a, b) => a.within / a.called - b.within / b.called || a.location.localeCompare(b.location))
  const rest = target.slice(12)
  const [called, within] = [rest.reduce((n, row) => n + row.called, 0), rest.reduce((n, row) => n + row.within, 0)]
  return {
    service: [...service.slice(0, 12).map((row) => row.location), 'Other 14 locations'],
    serviceRest: `Other 14 locations: median ${quantile(pooled, 0.5).toFixed(1)} min`,
    serviceAll: service.map((row) => row.location),
    target: [...target.slice(0, 12).map((row) => row.location), 'Other 14 locations'],
    targetRest: `Other 14 locations: ${((100 * within) / called).toFixed(1)}% of ${called} within 10 min`,
  }
}

/**
 * Every location shown whose fold button does not say what is shown: "Hide queues" and
 * aria-expanded=true exactly when some of its queues can be seen (none when all agree).
 */
const foldsOutOfStep = (page: Page) =>
  page.locator('#places-list .location').evaluateAll((boxes) =>
    boxes.filter((box) => (box as HTMLElement).checkVisibility()).flatMap((box) => {
      const fold = box.querySelector('button.fold')
      if (!fold) return []
      const seen = [...box.querySelectorAll<HTMLElement>('.checks input')].some((input) => input.checkVisibility())
      const says = fold.getAttribute('aria-expanded') === 'true' && fold.textContent!.startsWith('Hide queues')
      const saysNot = fold.getAttribute('aria-expanded') === 'false' && fold.textContent!.startsWith('Show queues')
      return (seen ? says : saysNot) ? [] : [`${fold.textContent} (aria-expanded=${fold.getAttribute('aria-expanded')}) with ${seen ? 'queues' : 'no queue'} shown`]
    }),
  )

/** The row labels of a chart drawn alike (their lines joined) though their full names differ. */
const rowsReadAlike = (page: Page, chart: string) =>
  page.locator(`#chart-${chart} svg text`).evaluateAll((texts) => {
    const rows = texts.filter((text) => text.querySelector(':scope > title')).map((text) => ({ drawn: [...text.childNodes].filter((node) => node.nodeName !== 'title').map((node) => node.textContent).join('/'), name: text.querySelector(':scope > title')!.textContent! }))
    return rows.filter((row, i) => rows.some((other, j) => j !== i && other.drawn === row.drawn && other.name !== row.name)).map((row) => `${row.drawn} (${row.name})`)
  })

/** The full names (tooltips) of a chart's row labels, in drawing order. */
const rowNames = (page: Page, chart: string) => page.locator(`#chart-${chart} svg title`).evaluateAll((titles) => titles.filter((t) => t.parentElement!.tagName === 'text').map((t) => t.textContent!))

describe.skipIf(!chromiumAvailable)('a chain at a glance', () => {
  const setup = browserSetup({ server: {} })

  for (const [size, viewport] of Object.entries(SIZES)) {
    test(`${size}: search, fold, select a location by keyboard; charts sorted, 12 and the rest, all on request, full names`, async () => {
      const { token, locations } = chainOrganisation(setup.server, ticketsOf)
      const { page } = await openPage(setup.browser, setup.server.base, { viewport })
      await useToken(page, token)
      await page.getByText('All 30 locations and 133 queues').waitFor()
      await setRange(page, DAY, DAY)
      // Folded, the list costs one Tab: from To to Charts in a few presses.
      await page.getByLabel('To (included)', { exact: true }).focus()
      let presses = 0
      while (presses < 40 && (await page.evaluate(() => document.activeElement?.id)) !== 'charts') {
        await page.keyboard.press('Tab')
        presses++
      }
      expect(presses).toBeLessThanOrEqual(24) // 177 before the list was folded
      expect(await page.locator('#places').evaluate((fieldset) => fieldset.getBoundingClientRect().height)).toBeLessThan(viewport.height / 2)

      // Unfolded, every location's queues are hidden, its button says so.
      await page.getByText('All 30 locations and 133 queues').click()
      expect(await foldsOutOfStep(page)).toEqual([])
      expect(await page.locator('#places-list .checks input').evaluateAll((inputs) => inputs.filter((input) => input.checkVisibility()).length)).toBe(0)
      await page.getByText('All 30 locations and 133 queues').click()

      // Search by keyboard, without accents: "kolkata" finds the Kolkata stores; Tab twice, Space ticks one's queues.
      await page.getByLabel('Find a location or queue').focus()
      await page.keyboard.type('kolkata park street 1')
      expect(await page.locator('#places-found').textContent()).toBe('1 location matches “kolkata park street 1”.')
      await page.keyboard.press('Tab') // the list's summary
      await page.keyboard.press('Tab') // the one location found
      await page.keyboard.press('Space')
      const kolkata = locations.find((location) => location.name === 'Kolkata Park Street 1')!
      expect(await page.locator('#summary').textContent()).toContain(`${kolkata.queues.length} queues in 1 location`)
      // A queue's name finds its locations, unfolded to that queue; "zurich" finds "Zürich".
      await page.getByLabel('Find a location or queue').fill('zurich')
      expect(await page.locator('#places-found').textContent()).toBe('4 locations match “zurich”.')
      expect(await foldsOutOfStep(page)).toEqual([])
      // A queue's name unfolds the locations that have it, each button saying Hide.
      await page.getByLabel('Find a location or queue').fill('passports')
      expect(await foldsOutOfStep(page)).toEqual([])
      expect(await page.getByRole('button', { name: 'Hide queues of Kolkata Park Street 1' }).getAttribute('aria-expanded')).toBe('true')
      // Escape clears the search: the whole list again, no count.
      await page.getByLabel('Find a location or queue').press('Escape')
      expect(await page.getByLabel('Find a location or queue').inputValue()).toBe('')
      expect(await page.locator('#places-found').textContent()).toBe('')
      // The folds the search opened are folded again, as they were.
      expect(await foldsOutOfStep(page)).toEqual([])
      await page.getByRole('checkbox', { name: 'Kolkata Park Street 1' }).uncheck()
      expect(await page.locator('#summary').textContent()).toContain('all queues')
      // A location's fold button shows its queues.
      await page.getByRole('button', { name: 'Show queues of Kolkata Park Street 1' }).click()
      expect(await page.getByRole('group', { name: 'Queues of Kolkata Park Street 1' }).getByRole('checkbox').count()).toBe(kolkata.queues.length)
      expect(await seriousViolations(page)).toEqual([])

      await page.getByRole('button', { name: 'Charts', exact: true }).click()
      await page.locator('#progress').filter({ hasText: /^(Charts drawn from|No tickets)/ }).waitFor()
      expect(await page.locator('#progress').textContent()).toStartWith('Charts drawn from 384 tickets')
      // Wait: the longest median first (queue k waits k+1 minutes at the median), 12 and the other 116 as one.
      const queues = locations.flatMap((location) => location.queues.map((queue) => `${location.name} · ${queue.name}`))
      expect(queues).toHaveLength(128) // the standard five have no tickets here
      const longest = [...queues].reverse()
      expect(await rowNames(page, 'wait')).toEqual([...longest.slice(0, 12), 'Other 116 queues'])
      expect(await page.locator('#chart-wait .order').textContent()).toBe('Longest median wait first; the first 12 of 128 queues, the other 116 together as one bar. The table lists them all by name.')
      // The other 116 pooled (not a median of medians): queues k = 0…115 waited k, k+1 and k+2 minutes.
      const pooled = Array.from({ length: 116 }, (_, k) => [k, k + 1, k + 2]).flat().sort((a, b) => a - b)
      const median = (pooled[173]! + pooled[174]!) / 2
      expect(await page.locator('#chart-wait svg title').filter({ hasText: 'Other 116 queues: median' }).textContent()).toBe(`Other 116 queues: median ${median.toFixed(1)} min`)
      await page.locator('#chart-wait').getByRole('button', { name: 'Show all 128 queues' }).click()
      expect(await rowNames(page, 'wait')).toEqual(longest)
      // All 128 rows: the value axis (its 0) is at the top as well as the bottom.
      expect(await page.locator('#chart-wait svg text').evaluateAll((texts) => texts.filter((text) => text.textContent === '0').length)).toBe(2)
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Show the first 12 only')
      // The numbers of a table of many queues show without scrolling sideways, on a phone too (names wrap).
      await page.locator('#chart-wait summary').first().click()
      const [wrapBox, numberBox] = await Promise.all([page.locator('#chart-wait .table-wrap').first().boundingBox(), page.locator('#chart-wait .table-wrap td.number').first().boundingBox()])
      expect(numberBox!.x + numberBox!.width).toBeLessThanOrEqual(wrapBox!.x + wrapBox!.width)
      // Its CSV link and .xlsx button look alike.
      const looks = await page.locator('#chart-wait .numbers-files').first().evaluate((p) => [...p.querySelectorAll('a, button')].map((node) => { const style = getComputedStyle(node); return [style.borderTopWidth, style.paddingLeft, style.color, style.textDecorationLine].join(' ') }))
      expect(new Set(looks).size).toBe(1)
      // Tickets by location: the most first; the table, by name, equals the tickets' own counts.
      const perLocation = await page.locator('#chart-per-location table tbody tr').evaluateAll((rows) => rows.map((row) => [row.querySelector('th')!.textContent!, row.lastElementChild!.textContent!]))
      expect(perLocation).toEqual(locations.map((location) => [location.name, String(location.queues.length * 3)]).sort((a, b) => a[0]!.localeCompare(b[0]!)))
      // The other locations summed outgrow every named one: their bar is cut at the longest named, its total written beside it.
      const byCount = perLocation.map(([, count]) => Number(count)).sort((a, b) => b - a)
      expect(byCount.slice(12).reduce((a, b) => a + b, 0)).toBeGreaterThan(byCount[0]!)
      expect(await page.locator('#chart-per-location .cut-total').textContent()).toBe(`${byCount.slice(12).reduce((a, b) => a + b, 0).toLocaleString('en-US')} ›`)
      expect(await page.locator('#chart-per-location .order').textContent()).toContain('together as one bar. Its bar is cut at the longest of the others, its total written beside it.')
      expect((await rowNames(page, 'per-location')).slice(0, 2)).toEqual(locations.filter((location) => location.queues.length === 5).map((location) => location.name).sort().slice(0, 2))
      // Outcome: most ended tickets first (all 3), 12 and the rest.
      expect((await rowNames(page, 'outcome')).at(-1)).toBe('Other 116 queues')
      // Service time and share within the target wait: the same rule, per location (26 with tickets).
      const want = perLocationCharts(locations, ticketsOf(locations))
      expect(await rowNames(page, 'service')).toEqual(want.service)
      expect(await page.locator('#chart-service .order').textContent()).toBe('Longest median service first; the first 12 of 26 locations, the other 14 together as one bar. The tables list them all by name, per location and per queue.')
      expect(await page.locator('#chart-service svg title').filter({ hasText: 'Other 14 locations: median' }).textContent()).toBe(want.serviceRest)
      expect(await rowNames(page, 'target')).toEqual(want.target)
      expect(await page.locator('#chart-target .order').textContent()).toBe('Lowest share first; the first 12 of 26 locations, the other 14 together as one bar. The tables list them all by name, per location and per queue.')
      expect(await page.locator('#chart-target svg title').filter({ hasText: 'Other 14 locations:' }).textContent()).toBe(want.targetRest)
      // Cut labels (the phone's) keep a name's end: no two rows read alike ("Sydney Circular Q…" twice before).
      for (const chart of ['service', 'per-location', 'wait']) expect(await rowsReadAlike(page, chart)).toEqual([])
      // The per-queue numbers as a workbook too, as every table's.
      const [workbook] = await Promise.all([page.waitForEvent('download'), page.locator('#chart-service').getByRole('button', { name: 'Download the numbers per queue (.xlsx)' }).click()])
      expect(workbook.suggestedFilename()).toStartWith('service-queue_')
      expect(workbook.suggestedFilename()).toEndWith('.xlsx')
      await page.locator('#chart-service').getByRole('button', { name: 'Show all 26 locations' }).click()
      expect(await rowNames(page, 'service')).toEqual(want.serviceAll)
      expect(await page.locator('#chart-service .order').textContent()).toBe('Longest median service first; all 26 locations. The tables list them by name, per location and per queue.')
      expect(await chartTextProblems(page)).toEqual([])
      expect(await seriousViolations(page)).toEqual([])
      await page.locator('#chart-wait').scrollIntoViewIfNeeded()
      await screenshot(page, `chain-wait-${size}`)
      await page.context().close()
    })
  }
})
