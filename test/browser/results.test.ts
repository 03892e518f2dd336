import { describe, expect, test } from 'bun:test'
import { browserSetup, chromiumAvailable, openPage, setRange, useToken } from './support.ts'

/** Each action's result stays on show until the same action replaces it. */
describe.skipIf(!chromiumAvailable)('results that stay', () => {
  const setup = browserSetup({ server: {} })

  test('the charts do not hide the preview, a download hides neither, and a new preview replaces only the preview', async () => {
    const { page } = await openPage(setup.browser, setup.server.base)
    await useToken(page, setup.server.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-04')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByRole('cell', { name: 't-001' }).waitFor()

    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/^Charts drawn from 6 tickets/).waitFor()
    expect(await page.locator('#preview-section').isVisible()).toBe(true)
    expect(await page.locator('#preview-table tbody tr').count()).toBe(6)

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    await download.path()
    await page.getByText(/^Downloaded tickets_/).waitFor()
    expect(await page.locator('#preview-section').isVisible()).toBe(true)
    expect(await page.locator('#charts-section').isVisible()).toBe(true)

    // Another query's preview: the preview's rows change, the charts stay as they were drawn.
    const charts = await page.locator('#charts-summary').textContent()
    await page.getByRole('checkbox', { name: 'Schalter 1 — Ämter' }).check()
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByText(/^3 tickets match; all are shown/).first().waitFor()
    expect(await page.locator('#preview-table tbody tr').count()).toBe(3)
    expect(await page.locator('#charts-section').isVisible()).toBe(true)
    expect(await page.locator('#charts-summary').textContent()).toBe(charts)
    await page.context().close()
  })
})
