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

/** Per queue k (in order), 3 tickets called after k, k+1 and k+2 minutes and completed: medians differ per queue. */
function ticketsOf(locations: ChainLocation[]): FixtureTicket[] {
  const tickets: FixtureTicket[] = []
  let k = 0
  for (const location of locations) {
    for (const queue of location.queues) {
      for (let j = 0; j < 3; j++) {
        const created = Date.parse(`${DAY}T12:00:00Z`) + (k * 3 + j) * 1000
        const called = created + (k + j) * 60_000
        tickets.push({
          id: `${queue.id}-${j}`, number: j, queueId: queue.id, locationId: location.id, status: j === 2 && k % 2 ? 'NO_SHOW' : 'COMPLETED', createdAt: new Date(created).toISOString(),
          calledAt: new Date(called).toISOString(), completedAt: j === 2 && k % 2 ? null : new Date(called + 300_000).toISOString(), noShowAt: j === 2 && k % 2 ? new Date(called + 60_000).toISOString() : null,
        })
      }
      k++
    }
  }
  return tickets
}

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
      // Escape clears the search: the whole list again, no count.
      await page.getByLabel('Find a location or queue').press('Escape')
      expect(await page.getByLabel('Find a location or queue').inputValue()).toBe('')
      expect(await page.locator('#places-found').textContent()).toBe('')
      await page.getByRole('checkbox', { name: 'Kolkata Park Street 1' }).uncheck()
      expect(await page.locator('#summary').textContent()).toContain('all queues')
      // A location's fold button shows its queues.
      await page.getByRole('button', { name: 'Show queues of Kolkata Park Street 1' }).click()
      expect(await page.getByRole('group', { name: 'Queues of Kolkata Park Street 1' }).getByRole('checkbox').count()).toBe(kolkata.queues.length)
      expect(await seriousViolations(page)).toEqual([])

      await page.getByRole('button', { name: 'Charts', exact: true }).click()
      await page.getByText(/^(Charts drawn from|No tickets)/).waitFor()
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
      // Tickets by location: the most first; the table, by name, equals the tickets' own counts.
      const perLocation = await page.locator('#chart-per-location table tbody tr').evaluateAll((rows) => rows.map((row) => [row.querySelector('th')!.textContent!, row.lastElementChild!.textContent!]))
      expect(perLocation).toEqual(locations.map((location) => [location.name, String(location.queues.length * 3)]).sort((a, b) => a[0]!.localeCompare(b[0]!)))
      expect((await rowNames(page, 'per-location')).slice(0, 2)).toEqual(locations.filter((location) => location.queues.length === 5).map((location) => location.name).sort().slice(0, 2))
      // Outcome: most ended tickets first (all 3), 12 and the rest.
      expect((await rowNames(page, 'outcome')).at(-1)).toBe('Other 116 queues')
      expect(await chartTextProblems(page)).toEqual([])
      expect(await seriousViolations(page)).toEqual([])
      await page.locator('#chart-wait').scrollIntoViewIfNeeded()
      await screenshot(page, `chain-wait-${size}`)
      await page.context().close()
    })
  }
})
