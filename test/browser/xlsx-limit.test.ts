import { describe, expect, test } from 'bun:test'
import { browserSetup, chromiumAvailable, openPage, seriousViolations, setRange, useToken } from './support.ts'

/**
 * Over a sheet's rows, the .xlsx is refused before the download starts when the page knows the
 * count (the charts on show are of the same selection), with the CSV offered; without a count,
 * the stream's own guard says it when reached. The limit is the production one (1,048,576 rows,
 * header included) lowered through the checkbox's data-max-rows, read by the same code.
 */
describe.skipIf(!chromiumAvailable)('the .xlsx over a sheet’s rows', () => {
  const setup = browserSetup({ server: {} })

  test('refused before the download with the CSV offered; the stream guard when no count is known', async () => {
    const { token } = setup.server.seeded()
    const { page } = await openPage(setup.browser, setup.server.base, { viewport: { width: 1366, height: 768 }, timezoneId: 'Europe/Zurich' })
    const downloads: string[] = []
    page.on('download', (download) => downloads.push(download.suggestedFilename()))
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-02', '2026-03-03')
    // A sheet of 3 rows: the header and 2 tickets.
    await page.locator('#as-xlsx').evaluate((box) => ((box as HTMLInputElement).dataset.maxRows = '3'))

    // No count known yet: the download starts and the stream's guard stops it at the limit.
    await page.getByLabel('As an Excel workbook (.xlsx)').check()
    await page.getByRole('button', { name: 'Download CSV' }).click()
    await page.getByRole('alert').filter({ hasText: /more than 2 rows.*no \.xlsx can hold it/ }).waitFor()

    // Charts of the same selection: now the page knows, and says so before any download starts.
    await page.getByRole('button', { name: 'Charts', exact: true }).click()
    const drawn = await page.getByText(/^Charts drawn from \d+ tickets/).textContent()
    const tickets = Number(/from (\d+) tickets/.exec(drawn!)![1])
    expect(tickets).toBeGreaterThan(2)
    const before = downloads.length
    await page.getByRole('button', { name: 'Download CSV' }).click()
    const alert = page.getByRole('alert')
    await expect(alert.textContent()).resolves.toContain(`This selection has ${tickets} tickets (counted by the charts on show), more than the 2 rows an .xlsx sheet holds: no .xlsx was started.`)
    const instead = page.getByRole('button', { name: 'Download the CSV instead' })
    await instead.waitFor()
    expect(await instead.evaluate((button) => button === document.activeElement)).toBe(true)
    expect(downloads.length).toBe(before)
    expect(await seriousViolations(page)).toEqual([])

    // The CSV instead: the names file, every row.
    const [csv] = await Promise.all([page.waitForEvent('download'), instead.click()])
    expect(csv.suggestedFilename()).toMatch(/_names_Europe-Zurich\.csv$/)
    await page.getByText(new RegExp(`^Downloaded .*\\.csv: ${tickets} rows`)).waitFor()
    expect(await page.getByLabel('As an Excel workbook (.xlsx)').isChecked()).toBe(false)
    expect(await instead.isHidden()).toBe(true)
    await page.context().close()
  })
})
