import { describe, expect, test } from 'bun:test'
import { openTenant } from '../support/harness.ts'
import { writeTickets } from '../support/fixtures.ts'
import { browserSetup, chromiumAvailable, openPage, seriousViolations, setRange, useToken } from './support.ts'

/**
 * Over a sheet's rows, the .xlsx is refused before its file starts, with the CSV offered: by the
 * count of the charts on show for the same selection, else by a count the download makes first.
 * Tickets that arrive after a count meet the stream's own guard. The limit is the production one
 * (1,048,576 rows, header included) lowered through the checkbox's data-max-rows, read by the same code.
 */
describe.skipIf(!chromiumAvailable)('the .xlsx over a sheet’s rows', () => {
  const setup = browserSetup({ server: {} })

  test('refused before the file starts, counted first or by the charts, the CSV offered; the stream guard for rows added since', async () => {
    const { org, token } = setup.server.seeded()
    const { page } = await openPage(setup.browser, setup.server.base, { viewport: { width: 1366, height: 768 }, timezoneId: 'Europe/Zurich' })
    const downloads: string[] = []
    page.on('download', (download) => downloads.push(download.suggestedFilename()))
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-02', '2026-03-03')
    const limit = (rows: number) => page.locator('#as-xlsx').evaluate((box, value) => ((box as HTMLInputElement).dataset.maxRows = String(value)), rows)
    const alert = page.getByRole('alert')
    const instead = page.getByRole('button', { name: 'Download the CSV instead' })

    // No charts: the download counts first, and refuses before any file (a sheet of 3 rows: the header and 2 tickets).
    await limit(3)
    await page.getByLabel('As an Excel workbook (.xlsx)').check()
    await page.getByRole('button', { name: 'Download .xlsx' }).click()
    await alert.filter({ hasText: 'counted before the download' }).waitFor()
    const counted = Number(/has (\d+) tickets/.exec((await alert.textContent())!)![1])
    expect(counted).toBeGreaterThan(2)
    expect(await alert.textContent()).toContain(`This selection has ${counted} tickets (counted before the download), more than the 2 rows an .xlsx sheet holds: no .xlsx was started.`)
    expect(await instead.evaluate((button) => button === document.activeElement)).toBe(true)
    expect(downloads).toEqual([])
    expect(await seriousViolations(page)).toEqual([])

    // Charts of the same selection: their count, said as theirs.
    await page.getByRole('button', { name: 'Charts', exact: true }).click()
    const drawn = await page.getByText(/^Charts drawn from \d+ tickets/).textContent()
    const tickets = Number(/from (\d+) tickets/.exec(drawn!)![1])
    expect(tickets).toBe(counted)
    await page.getByRole('button', { name: 'Download .xlsx' }).click()
    await expect(alert.textContent()).resolves.toContain(`This selection has ${tickets} tickets (counted by the charts on show), more than the 2 rows an .xlsx sheet holds: no .xlsx was started.`)
    expect(downloads).toEqual([])

    // The CSV instead: the names file, every row.
    const [csv] = await Promise.all([page.waitForEvent('download'), instead.click()])
    expect(csv.suggestedFilename()).toMatch(/_names_Europe-Zurich\.csv$/)
    await page.getByText(new RegExp(`^Downloaded .*\\.csv: ${tickets} rows`)).waitFor()
    expect(await page.getByLabel('As an Excel workbook (.xlsx)').isChecked()).toBe(false)
    expect(await page.locator('#download').textContent()).toBe('Download CSV')
    expect(await instead.isHidden()).toBe(true)

    // The count says the sheet holds them; tickets added since go past it: the stream's guard says so.
    await limit(tickets + 2)
    const db = openTenant(setup.server.dataDir, org.id)
    writeTickets(db, [1, 2].map((n) => ({ id: `t-late-${n}`, number: 900 + n, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: `2026-03-02T1${n}:00:00.000Z` })))
    db.close()
    await page.getByLabel('As an Excel workbook (.xlsx)').check()
    await page.getByRole('button', { name: 'Download .xlsx' }).click()
    await alert.filter({ hasText: new RegExp(`more than ${tickets + 1} rows.*no \\.xlsx can hold it`) }).waitFor()

    // In each location's own days the count is of the names file's rows (those inside each one's days): the charts' count.
    // (The charts on show redraw in that mode; a new range is a selection they have not counted.)
    await page.getByLabel("In each location's own").check()
    await page.getByText(/^Charts drawn from/).waitFor()
    // The mode switch redrew them: the refusal quotes their new count, the one on show, not the
    // one the charts showed before (two tickets were added since, and the days are each location's own).
    await limit(3)
    const shown = Number(/from ([\d,]+) tickets?/.exec((await page.getByText(/^Charts drawn from [\d,]+ tickets?/).textContent())!)![1]!.replaceAll(',', ''))
    expect(shown).not.toBe(tickets)
    await page.getByRole('button', { name: 'Download .xlsx' }).click()
    await expect(alert.textContent()).resolves.toContain(`This selection has ${shown} tickets (counted by the charts on show)`)
    await setRange(page, '2026-03-01', '2026-03-03')
    await page.getByRole('button', { name: 'Download .xlsx' }).click()
    await alert.filter({ hasText: 'counted before the download' }).waitFor()
    const own = Number(/has (\d+) tickets/.exec((await alert.textContent())!)![1])
    await page.getByRole('button', { name: 'Charts', exact: true }).click()
    await page.getByText(new RegExp(`^Charts drawn from ${own} tickets`)).waitFor()
    expect(downloads).toHaveLength(1)
    await page.context().close()
  })
})
