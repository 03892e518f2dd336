import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { browserSetup, chartTextProblems, chromiumAvailable, openPage, screenshot, seriousViolations, setRange, useToken } from './support.ts'

/**
 * Empty and small selections drawn right (0 tickets, one day, one location, one queue), at a
 * laptop's 1366×768 and a phone's 390×844, light and dark: no bar where a count is 0, a heat
 * map legend that says "no tickets", every label whole. The standard fixture's tickets.
 */

const SIZES = { laptop: { width: 1366, height: 768 }, phone: { width: 390, height: 844 } } as const

/** Bars and cells the charts drew, per chart (marks carry their class: bars, cells). */
function drawnMarks(page: Page): Promise<Record<string, number>> {
  return page.locator('#charts-list .chart').evaluateAll((charts) =>
    Object.fromEntries(charts.map((chart) => [chart.id, chart.querySelectorAll('g.bars > rect, g.cells > rect').length])),
  )
}

async function drawCharts(page: Page) {
  await page.getByRole('button', { name: 'Charts', exact: true }).click()
  await page.getByText(/^(Charts drawn from|No tickets match)/).waitFor()
}

describe.skipIf(!chromiumAvailable)('empty and small charts', () => {
  const setup = browserSetup({ server: {} })

  for (const [size, viewport] of Object.entries(SIZES)) {
    for (const colorScheme of ['light', 'dark'] as const) {
      test(`${size}, ${colorScheme}: 0 tickets draw no bar, the heat map says "no tickets"; one queue of one location on one day draws only its counts`, async () => {
        const { token } = setup.server.seeded()
        const { page } = await openPage(setup.browser, setup.server.base, { viewport, colorScheme })
        await useToken(page, token)
        await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
        // One day, status Waiting only: the one waiting ticket is on 3 March, so none.
        await setRange(page, '2026-03-02', '2026-03-02')
        await page.getByRole('checkbox', { name: 'Waiting' }).check()
        await drawCharts(page)
        await page.getByText('No ticket of the selection was created in this range: every day counts 0.').waitFor()
        const empty = await drawnMarks(page)
        expect(empty['chart-per-day']).toBe(0)
        expect(empty['chart-arrivals']).toBe(0)
        expect(await page.locator('#chart-arrivals').textContent()).toContain('Tickets created: no tickets')
        // No status swatches above a chart with no bar: the key says there is nothing.
        expect(await page.locator('#chart-per-day').textContent()).toContain('Tickets by status: no tickets')
        expect(await page.locator('#chart-per-day [class$="-swatches"]').count()).toBe(0)
        // No ramp from 0 to 0 beside it.
        expect(await page.locator('#chart-arrivals svg[class$="-ramp"]').count()).toBe(0)
        expect(await chartTextProblems(page)).toEqual([])
        expect(await seriousViolations(page)).toEqual([])
        await page.locator('#charts-section').scrollIntoViewIfNeeded()
        await screenshot(page, `chart-empty-${size}-${colorScheme}`)

        // One queue of one location, one day: 3 tickets (waiting, called, skipped), one bar each.
        await page.getByRole('checkbox', { name: 'Waiting' }).uncheck()
        await setRange(page, '2026-03-03', '2026-03-03')
        await page.getByRole('checkbox', { name: /Schalter 1/ }).check()
        await drawCharts(page)
        const small = await drawnMarks(page)
        expect(small['chart-per-day']).toBe(3)
        // The key lists only the statuses with tickets and says which have none.
        expect(await page.locator('#chart-per-day [class$="-swatch"]').count()).toBe(3)
        expect(await page.locator('#chart-per-day').textContent()).toMatch(/No tickets in this selection: /)
        // So do the per-location and outcome charts: 3 statuses, and of the ended ones only Skipped.
        expect(await page.locator('#chart-per-location [class$="-swatch"]').allTextContents()).toEqual(['Waiting', 'Called', 'Skipped'])
        expect(await page.locator('#chart-per-location').textContent()).toContain('No tickets in this selection: Completed, Canceled, No-show.')
        expect(await page.locator('#chart-outcome [class$="-swatch"]').allTextContents()).toEqual(['Skipped'])
        expect(await page.locator('#chart-outcome').textContent()).toContain('No tickets in this selection: Completed, No-show, Canceled.')
        // Only the one outcome with tickets is drawn, and the sentence reaches a screen reader through the picture's name.
        expect(await page.locator('#chart-outcome g.bars > rect').count()).toBe(1)
        expect(await page.locator('#chart-outcome [role="img"]').getAttribute('aria-label')).toMatch(/No tickets in this selection: Completed, No-show, Canceled\.$/)
        // All three at 08:00-08:59 on a Tuesday: every heat map cell (an empty one in the ramp's 0) and one bar of the hours' totals.
        expect(small['chart-arrivals']).toBe(7 * 24 + 1)
        // The ramp's ticks are counts: whole numbers only (0, 1, 2, 3, not 0.5).
        const rampTicks = await page.locator('#chart-arrivals svg[class$="-ramp"] g.tick text').allTextContents()
        expect(rampTicks.length).toBeGreaterThan(1)
        expect(rampTicks.filter((tick) => !/^\d+$/.test(tick))).toEqual([])
        expect(await chartTextProblems(page)).toEqual([])
        expect(await seriousViolations(page)).toEqual([])
        await screenshot(page, `chart-small-${size}-${colorScheme}`)

        // The target wait: Zürich's two called tickets waited 1 and 5 minutes. A new target redraws.
        const target = page.getByLabel('Target wait (minutes, for the charts)')
        expect(await page.locator('#chart-target tbody tr').first().textContent()).toBe('Zürich Hauptbahnhof22100.0')
        await target.fill('2')
        await target.press('Enter')
        await page.getByRole('heading', { name: 'Called within 2 min by location' }).waitFor()
        expect(await page.locator('#chart-target tbody tr').first().textContent()).toBe('Zürich Hauptbahnhof2150.0')
        await target.fill('-5')
        await page.getByRole('button', { name: 'Charts', exact: true }).click()
        await page.getByRole('alert').filter({ hasText: 'The target wait must be a number of minutes from 0 to 1440' }).waitFor()
        expect(await target.getAttribute('aria-invalid')).toBe('true')
        await page.context().close()
      })
    }
  }
})
