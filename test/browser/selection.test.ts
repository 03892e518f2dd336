import { beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { openTenant } from '../support/harness.ts'
import { writeStructure } from '../support/fixtures.ts'
import { browserSetup, chromiumAvailable, openPage, pickerRecord, setRange, useToken } from './support.ts'

/**
 * What is ticked is what is exported: a location's box ticks its queues, and the request names
 * the union of the ticked queues (the API would AND a locationId with a queueId).
 */
describe.skipIf(!chromiumAvailable)('the selection of the export page', () => {
  const setup = browserSetup({ server: {} })
  let token: string
  beforeAll(() => {
    token = setup.server.seeded().token
  })

  async function ready(): Promise<{ page: Page; requests: string[] }> {
    const opened = await openPage(setup.browser, setup.server.base, { picker: 'stub' })
    await useToken(opened.page, token)
    await opened.page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(opened.page, '2026-03-01', '2026-03-04')
    return opened
  }

  const summary = (page: Page) => page.locator('#summary').textContent()
  const apiCalls = (requests: string[], path: string) => requests.filter((url) => url.includes(path)).map((url) => new URL(url).searchParams)

  test("a location plus another location's queue exports their union, and the summary line says so", async () => {
    const { page, requests } = await ready()
    expect(await summary(page)).toBe('Will export: all queues, all statuses, 1 Mar – 4 Mar 2026 (4 days).')
    await page.getByRole('checkbox', { name: 'Zürich Hauptbahnhof' }).check()
    expect(await page.getByRole('checkbox', { name: 'Schalter 1 — Ämter' }).isChecked()).toBe(true)
    await page.getByRole('checkbox', { name: 'Payments' }).check()
    expect(await summary(page)).toBe('Will export: 2 queues in 2 locations, all statuses, 1 Mar – 4 Mar 2026 (4 days).')

    await page.getByRole('button', { name: 'Download CSV' }).click()
    await page.getByText(/^Saved tickets_20260301T000000Z_20260305T000000Z\.csv: 5 rows/).waitFor()
    const [sent] = apiCalls(requests, '/v1/exports/tickets.csv')
    expect(sent!.getAll('queueId').sort()).toEqual(['q_pay', 'q_zh'])
    expect(sent!.getAll('locationId')).toEqual([])
    const direct = await (await setup.server.get('/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-05&queueId=q_pay&queueId=q_zh', token)).text()
    const file = Object.values((await pickerRecord(page)).files)[0]!
    expect(file).toBe(direct)
    expect(file.split('\r\n').slice(1, -1).map((row) => row.split(',')[0])).toEqual(['t-001', 't-002', 't-004', 't-005', 't-006'])
    await page.context().close()
  })

  test("a location's box follows its queues: ticked, half-ticked, clear", async () => {
    const { page } = await ready()
    const amsterdam = page.getByRole('checkbox', { name: 'Amsterdam Centraal (amsterdam)', exact: true })
    await amsterdam.check()
    for (const name of ['Archive desk (inactive)', 'ID & Passports', 'Payments']) expect(await page.getByRole('checkbox', { name }).isChecked()).toBe(true)
    expect(await summary(page)).toStartWith('Will export: 3 queues in 1 location,')
    await page.getByRole('checkbox', { name: 'ID & Passports' }).uncheck()
    expect(await amsterdam.evaluate((input: HTMLInputElement) => [input.checked, input.indeterminate])).toEqual([false, true])
    await page.getByRole('checkbox', { name: 'Completed' }).check()
    await page.getByRole('checkbox', { name: 'Canceled' }).check()
    expect(await summary(page)).toBe('Will export: 2 queues in 1 location, status Completed and Canceled, 1 Mar – 4 Mar 2026 (4 days).')
    // A click on a half-ticked box ticks all its queues, the next one clears them.
    await amsterdam.click()
    expect(await page.getByRole('checkbox', { name: 'ID & Passports' }).isChecked()).toBe(true)
    await amsterdam.click()
    expect(await page.getByRole('checkbox', { name: 'Payments' }).isChecked()).toBe(false)
    expect(await amsterdam.evaluate((input: HTMLInputElement) => [input.checked, input.indeterminate])).toEqual([false, false])
    // A location without queues has nothing to tick.
    expect(await page.getByRole('checkbox', { name: /Ålesund/ }).isDisabled()).toBe(true)
    await page.context().close()
  })

  test('every queue ticked is the same as none: the request names no queue', async () => {
    const { page, requests } = await ready()
    for (const name of ['Amsterdam Centraal (amsterdam)', 'Amsterdam Centraal (amsterdam-2)', 'Zürich Hauptbahnhof']) {
      await page.getByRole('checkbox', { name, exact: true }).check()
    }
    expect(await summary(page)).toStartWith('Will export: all queues,')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByRole('cell', { name: 't-006' }).waitFor()
    expect(apiCalls(requests, '/v1/tickets')[0]!.getAll('queueId')).toEqual([])
    await page.context().close()
  })

  test('Enter in a date field starts a preview, not a download', async () => {
    const { page, requests } = await ready()
    await page.getByLabel('To (included)').press('Enter')
    await page.getByRole('cell', { name: 't-001' }).waitFor()
    expect(apiCalls(requests, '/v1/exports/')).toEqual([])
    expect((await pickerRecord(page)).dialogs).toEqual([])
    await page.context().close()
  })

  test('more ticked queues than one request can name: said before anything is sent', async () => {
    const { org, token: many } = setup.server.organisation()
    const db = openTenant(setup.server.dataDir, org.id)
    writeStructure(db)
    const insert = db.prepare("INSERT INTO queues (id, location_id, name, slug) VALUES (?, 'loc_b', ?, ?)")
    db.transaction(() => {
      for (let i = 0; i < 500; i++) insert.run(`que_${String(i).padStart(16, '0')}`, `Desk ${i}`, `desk-${i}`)
    })()
    db.close()
    const { page, requests } = await openPage(setup.browser, setup.server.base)
    await useToken(page, many)
    await page.getByRole('checkbox', { name: 'Zürich Hauptbahnhof' }).check()
    const before = requests.length
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByRole('alert').filter({ hasText: '501 queues are too many for one request: tick fewer, or none for all queues.' }).waitFor()
    expect(requests.length).toBe(before)
    await page.context().close()
  })
})
