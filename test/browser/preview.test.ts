import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { VIEWPORTS, browserSetup, chromiumAvailable, organisationWithManyTickets, expectInViewport, openPage, screenshot, setRange, useToken, type ViewportName } from './support.ts'

const ZONE = 'Pacific/Auckland'

/** An instant as the preview should show it in ZONE, read with Intl (not the page's code). */
function local(iso: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'longOffset' })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  )
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName!.replace('GMT', 'UTC')}`
}

/** The preview reads as the file will: names where the file has ids, the count the API gave, nothing stale. */
describe.skipIf(!chromiumAvailable)('the preview of the export page', () => {
  const setup = browserSetup({ server: {} })

  async function ready(token: string, viewport: { width: number; height: number } = VIEWPORTS.desktop, timezoneId?: string): Promise<Page> {
    const { page } = await openPage(setup.browser, setup.server.base, { viewport, timezoneId })
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-04')
    return page
  }

  const preview = (page: Page) => page.getByRole('button', { name: 'Preview' }).click()
  const headers = (page: Page) => page.locator('#preview-table th').allTextContents()

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    const viewport = VIEWPORTS[size]
    test(`names with their ids, times in the chosen zone with their offset, the count, the demo column, scrolled into view (${viewport.width}×${viewport.height})`, async () => {
      const page = await ready(setup.server.seeded({ plan: 'demo' }).token, viewport, ZONE)
      await preview(page)
      const heading = page.getByRole('heading', { name: 'Preview' })
      await heading.waitFor()
      await expectInViewport(page, heading)
      await screenshot(page, `preview-${viewport.width}x${viewport.height}`)
      expect(await headers(page)).toEqual([
        'id', 'number', 'queue', 'location', 'status', ...['createdAt', 'calledAt', 'completedAt', 'cancelledAt', 'skippedAt', 'noShowAt'].map((time) => `${time} (${ZONE})`),
        'calledByDeviceSessionId', 'demo',
      ])
      const first = page.locator('#preview-table tbody tr').first()
      const cells = await first.locator('td').allInnerTexts()
      expect(cells.slice(0, 5)).toEqual(['t-001', '1', 'Payments\nq_pay', 'Amsterdam Centraal (amsterdam)\nloc_a', 'COMPLETED'])
      expect(cells.at(-1)).toBe('1')
      // t-001 was created at 09:00 UTC on 2 March: 22:00 that day in Auckland (NZDT, UTC+13), the UTC instant on hover.
      expect(cells.slice(5, 8)).toEqual([local('2026-03-02T09:00:00.000Z'), local('2026-03-02T09:05:00.000Z'), local('2026-03-02T09:10:00.000Z')])
      expect(cells[5]).toBe('2026-03-02 22:00:00 UTC+13:00')
      expect(await first.locator('td').nth(5).getAttribute('title')).toBe('2026-03-02T09:00:00.000Z')
      expect(await first.locator('td').nth(2).getAttribute('title')).toBe('q_pay')
      expect(await page.locator('#preview-table tbody tr').count()).toBe(6)
      expect(await page.locator('#preview-count').textContent()).toBe(
        `6 tickets match; all are shown. Times are in ${ZONE}. Selection: all queues, all statuses, 1 Mar – 4 Mar 2026.`,
      )
      expect(await page.locator('#progress').textContent()).toBe('6 tickets match; all are shown.')
      await page.context().close()
    })
  }

  test('a paid organisation has no demo column', async () => {
    const page = await ready(setup.server.seeded().token)
    await preview(page)
    await page.getByRole('cell', { name: 't-006' }).waitFor()
    expect(await headers(page)).not.toContain('demo')
    await page.context().close()
  })

  test('more rows than one page: "more than 500", a number the API gave, and the first 20 shown', async () => {
    const token = organisationWithManyTickets(setup.server, 600, 60)
    const page = await ready(token)
    await preview(page)
    await page.getByText('More than 500 tickets match; the first 20 are shown (the download has them all).', { exact: true }).first().waitFor()
    expect(await page.locator('#preview-table tbody tr').count()).toBe(20)
    await page.context().close()
  })

  test('a new query and Forget clear the old rows and progress', async () => {
    const page = await ready(setup.server.seeded().token)
    await preview(page)
    await page.getByRole('cell', { name: 't-001' }).waitFor()

    // A query that matches nothing: the old rows go, and the page says why there are none.
    await page.getByRole('checkbox', { name: 'General' }).check()
    await preview(page)
    await page.getByText('No tickets match: 1 queue in 1 location, all statuses, 1 Mar – 4 Mar 2026.').waitFor()
    expect(await page.locator('#preview-section').isVisible()).toBe(false)
    expect(await page.locator('#preview-table tr').count()).toBe(0)

    await page.getByRole('checkbox', { name: 'General' }).uncheck()
    await preview(page)
    await page.getByRole('cell', { name: 't-001' }).waitFor()
    await page.getByRole('button', { name: 'Forget' }).click()
    await page.getByText('No token in use: the token was forgotten from this tab.').waitFor()
    await expectInViewport(page, page.locator('#token-status'))
    expect(await page.locator('#preview-section').isVisible()).toBe(false)
    expect(await page.locator('#preview-table tr').count()).toBe(0)
    expect(await page.locator('#progress').textContent()).toBe('')
    expect(await page.getByRole('checkbox', { name: 'Payments' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Preview' }).isDisabled()).toBe(true)
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    // Nothing of the forgotten token's organisation comes back with a reload.
    await page.reload()
    expect(await page.locator('#token-status').textContent()).toBe('No token in use.')
    expect(await page.getByRole('checkbox', { name: 'Payments' }).count()).toBe(0)
    await page.context().close()
  })
})
