import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { standardTickets } from '../support/fixtures.ts'
import { browserSetup, chartTextProblems, chromiumAvailable, expectAnnounced, openPage, seriousViolations, useToken } from './support.ts'

/**
 * Quick ranges in the chosen zone, today marked as partial, the focus back on the control that
 * started an action, and results read out. The page's clock is held at 4 March 2026, 10:30 UTC.
 */

const SIZES = { laptop: { width: 1366, height: 768 }, phone: { width: 390, height: 844 } } as const
const NOW = '2026-03-04T10:30:00.000Z'

const dates = async (page: Page) => [await page.getByLabel('From', { exact: true }).inputValue(), await page.getByLabel('To (included)', { exact: true }).inputValue()]
/** The lines of the tick labels of a chart that say "so far" (the partial day's or week's). */
const partialTicks = (page: Page, chart: string) =>
  page.locator(`#chart-${chart} svg text`).evaluateAll((texts) => texts.filter((text) => text.textContent!.includes('so far') && text.children.length > 0).map((text) => [...text.children].map((line) => line.textContent)))
const focused = (page: Page) => page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent || document.activeElement?.tagName)

describe.skipIf(!chromiumAvailable)('quick ranges, today, focus and announcements', () => {
  const setup = browserSetup({ server: {} })

  for (const [size, viewport] of Object.entries(SIZES)) {
    for (const colorScheme of ['light', 'dark'] as const) {
      test(`${size}, ${colorScheme}`, async () => {
        // The standard tickets (2 and 3 March) and one of today, 4 March.
        const today = { id: 't-today', number: 9, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-04T09:00:00.000Z' }
        const { token } = setup.server.seeded({ tickets: [...standardTickets(), today] })
        const { page } = await openPage(setup.browser, setup.server.base, { viewport, colorScheme, fixedNow: NOW })
        // The default range: the last 30 full days, today left out.
        expect(await dates(page)).toEqual(['2026-02-02', '2026-03-03'])
        await useToken(page, token)
        await page.getByRole('checkbox', { name: 'Payments' }).waitFor()

        const quick = (name: string) => page.getByRole('group', { name: /Quick ranges/ }).getByRole('button', { name, exact: true })
        await quick('Yesterday').click()
        expect(await dates(page)).toEqual(['2026-03-03', '2026-03-03'])
        expect(await page.locator('#range-status').textContent()).toBe('Yesterday: 3 Mar 2026 (1 day in UTC).')
        await expectAnnounced(page.locator('#range-status'))
        await quick('Last 7 days').click()
        expect(await dates(page)).toEqual(['2026-02-25', '2026-03-03'])
        await quick('Last 30 days').click()
        expect(await dates(page)).toEqual(['2026-02-02', '2026-03-03'])
        await quick('Last month').click()
        expect(await dates(page)).toEqual(['2026-02-01', '2026-02-28'])
        await quick('This month').click()
        expect(await dates(page)).toEqual(['2026-03-01', '2026-03-04'])
        expect(await page.locator('#range-status').textContent()).toBe('This month: 1 Mar – 4 Mar 2026 (4 days in UTC, today so far included).')
        expect(await page.locator('#summary').textContent()).toContain('today is not over')
        expect(await seriousViolations(page)).toEqual([])

        // Charts by keyboard: the focus is on Charts again once they are drawn, and the result is read out.
        await page.getByRole('button', { name: 'Charts', exact: true }).focus()
        await page.keyboard.press('Enter')
        await page.getByText(/^Charts drawn from 7 tickets/).waitFor()
        await expectAnnounced(page.getByText(/^Charts drawn from 7 tickets/))
        expect(await focused(page)).toBe('charts')
        // Today is marked: a sentence, and a note in the table that its CSV does not carry.
        await page.getByText('2026-03-04 is today and is not over: its bar (drawn lighter, “so far” under its date) counts the tickets until 10:30, not a whole day.').waitFor()
        const lastRow = await page.locator('#chart-per-day tbody tr').last().locator('th').textContent()
        expect(lastRow).toBe('2026-03-04 (today, so far)')
        // And in the picture, not by its lighter colour alone: its tick says "so far" under the date.
        expect(await partialTicks(page, 'per-day')).toEqual([['03-04', 'so far']])
        // Over 30 days (its tick always written, the ticks near it left out), no text is cut or drawn over another.
        await page.getByLabel('From', { exact: true }).fill('2026-02-03')
        await page.getByRole('button', { name: 'Charts', exact: true }).click()
        await page.getByText(/^Charts drawn from 7 tickets/).waitFor()
        await page.getByText('2026-03-04 is today and is not over', { exact: false }).waitFor()
        expect(await partialTicks(page, 'per-day')).toEqual([['03-04', 'so far']])
        expect(await chartTextProblems(page)).toEqual([])
        await page.getByLabel('Per week').check()
        expect(await partialTicks(page, 'per-day')).toEqual([['03-02', 'so far']])
        await page.getByText('The last week holds today, which is not over: its bar (drawn lighter, “so far” under its date) counts the tickets until 10:30, not a whole week.').waitFor({ timeout: 5000 })
        expect(await chartTextProblems(page)).toEqual([])
        await page.getByLabel('Per day').check()
        const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download these numbers (CSV)' }).first().click()])
        expect((await Bun.file((await file.path())!).text()).trimEnd().split('\r\n').at(-1)).toBe('2026-03-04,1,0,0,0,0,0,1')
        expect(await seriousViolations(page)).toEqual([])

        // Download: the focus comes back to the button that started it.
        await page.getByRole('button', { name: 'Download CSV' }).click()
        await page.getByText(/^Downloaded /).waitFor()
        expect(await focused(page)).toBe('download')

        // In each location's own days, today ends at a different instant in each zone: no one clock time is named.
        await page.getByLabel("In each location's own").check()
        await page.getByRole('button', { name: 'Charts', exact: true }).click()
        await page.getByText("2026-03-04 is today and is not over: its bar (drawn lighter, “so far” under its date) counts each location's tickets so far, not a whole day.").waitFor()
        await page.getByLabel('In the zone above').check()

        // In another zone, "yesterday" is that zone's: at 10:30 UTC it is already 5 March on Kiritimati (UTC+14).
        await page.getByLabel('Time zone').fill('Pacific/Kiritimati')
        await page.getByLabel('Time zone').press('Enter')
        await quick('Yesterday').click()
        expect(await dates(page)).toEqual(['2026-03-04', '2026-03-04'])
        expect(await page.locator('#range-status').textContent()).toBe('Yesterday: 4 Mar 2026 (1 day in Pacific/Kiritimati).')
        await page.context().close()
      })
    }
  }
})
