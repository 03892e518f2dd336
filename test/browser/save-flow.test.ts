import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import {
  VIEWPORTS, browserSetup, chromiumAvailable, organisationWithManyTickets, expectAnnounced, expectInViewport, openPage, pickerRecord, releaseWrites, screenshot,
  setPicker, setRange, useToken,
} from './support.ts'

/**
 * The Chrome/Edge save path (File System Access API), with showSaveFilePicker replaced by the
 * recording stand-in of support.ts: the server is asked first, the dialog opens with the server's
 * file name, the success line names the file chosen, and a failure after the dialog leaves no file.
 */
describe.skipIf(!chromiumAvailable)('saving with the Save dialog (Chrome, Edge)', () => {
  const setup = browserSetup({ server: {}, limited: { rateLimitPerMinute: 2 } })

  async function ready(base: string, token: string, viewport: { width: number; height: number } = VIEWPORTS.desktop): Promise<Page> {
    const { page } = await openPage(setup.browser, base, { picker: 'stub', viewport })
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-04')
    return page
  }

  const download = (page: Page) => page.getByRole('button', { name: 'Download CSV' }).click()
  const DEMO_NAME = 'demo-tickets_20260301T000000Z_20260305T000000Z.csv'

  test("a demo organisation's dialog suggests demo-tickets_…csv; the success line names the file chosen; the file equals the API's", async () => {
    const { token } = setup.server.seeded({ plan: 'demo' })
    const page = await ready(setup.server.base, token)
    await setPicker(page, { chooseName: 'march for the board.csv' })
    await download(page)
    await page.getByText(`Saved march for the board.csv: 6 rows`, { exact: false }).waitFor()
    expect(await page.locator('#progress').textContent()).toMatch(
      new RegExp(`^Saved march for the board\\.csv: 6 rows \\(.+ kB\\)\\. \\(The server named it ${DEMO_NAME.replaceAll('.', '\\.')}\\.\\) It is marked as demo data\\.$`),
    )
    const record = await pickerRecord(page)
    expect(record.dialogs).toEqual([{ suggestedName: DEMO_NAME }])
    const direct = await (await setup.server.get('/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-05', token)).text()
    expect(record.files).toEqual({ 'march for the board.csv': direct })
    expect(direct.split('\r\n')[0]).toEndWith(',demo')
    await page.context().close()
  })

  test('the name kept as suggested is the name reported', async () => {
    const page = await ready(setup.server.base, setup.server.seeded().token)
    await download(page)
    await page.getByText(/^Saved tickets_20260301T000000Z_20260305T000000Z\.csv: 6 rows \(.+\)\.$/).waitFor()
    expect(Object.keys((await pickerRecord(page)).files)).toEqual(['tickets_20260301T000000Z_20260305T000000Z.csv'])
    await page.context().close()
  })

  test('a 401 answers before any dialog opens', async () => {
    const { org } = setup.server.seeded()
    const { id, token } = setup.server.token(org.id)
    const page = await ready(setup.server.base, token)
    setup.server.app.store.revokeToken(id, new Date().toISOString())
    await download(page)
    await page.getByRole('alert').filter({ hasText: /token was not accepted/ }).waitFor()
    expect(await pickerRecord(page)).toEqual({ dialogs: [], files: {}, removed: [] })
    await page.context().close()
  })

  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    test(`a 429 answers before any dialog opens, and is seen (${size})`, async () => {
      const page = await ready(setup.limited.base, setup.limited.seeded().token, viewport) // request 1
      await page.getByRole('button', { name: 'Preview' }).click() // request 2
      await page.getByRole('cell', { name: 't-001' }).waitFor()
      await download(page) // request 3: 429
      const message = page.getByRole('alert').filter({ hasText: /You can try again in \d+ seconds?\./ })
      await message.waitFor()
      await expectInViewport(page, message)
      await screenshot(page, `save-429-${viewport.width}x${viewport.height}`)
      expect(await pickerRecord(page)).toEqual({ dialogs: [], files: {}, removed: [] })
      await page.context().close()
    })
  }

  test('a write that fails after the dialog leaves no file, and says why', async () => {
    const page = await ready(setup.server.base, setup.server.seeded().token)
    await setPicker(page, { failWrite: true })
    await download(page)
    const message = page.getByRole('alert').filter({ hasText: 'The file could not be written: The disk is full. No file was left behind.' })
    await message.waitFor()
    await expectAnnounced(message)
    const record = await pickerRecord(page)
    expect(record.dialogs.length).toBe(1)
    expect(record.files).toEqual({})
    expect(record.removed).toEqual(['tickets_20260301T000000Z_20260305T000000Z.csv'])
    await page.context().close()
  })

  test('without handle.remove() the page names the empty file it could not remove', async () => {
    const page = await ready(setup.server.base, setup.server.seeded().token)
    await setPicker(page, { failWrite: true, noRemove: true, chooseName: 'x.csv' })
    await download(page)
    await page.getByRole('alert').filter({ hasText: 'An empty file named x.csv is left where you chose to save it; delete it.' }).waitFor()
    expect((await pickerRecord(page)).files).toEqual({ 'x.csv': '' })
    await page.context().close()
  })

  test('Cancel during the transfer leaves no file', async () => {
    const page = await ready(setup.server.base, setup.server.seeded().token)
    await setPicker(page, { holdWrites: true })
    await download(page)
    await page.waitForFunction(() => (window as unknown as { __picker: { held: unknown[] } }).__picker.held.length > 0)
    await page.getByRole('button', { name: 'Cancel' }).click()
    await releaseWrites(page)
    await page.getByRole('alert').filter({ hasText: 'The download was cancelled. No file was left behind.' }).waitFor()
    const record = await pickerRecord(page)
    expect(record.files).toEqual({})
    expect(record.removed).toEqual(['tickets_20260301T000000Z_20260305T000000Z.csv'])
    // The page is usable again at once.
    expect(await page.getByRole('button', { name: 'Download CSV' }).isEnabled()).toBe(true)
    await page.context().close()
  })

  test('without the Save dialog (Firefox, Safari), a Cancel during the transfer hands nothing to the browser', async () => {
    const token = organisationWithManyTickets(setup.server, 20_000, 10)
    const { page } = await openPage(setup.browser, setup.server.base, { picker: 'none' })
    await useToken(page, token)
    await setRange(page, '2026-03-01', '2026-03-04')
    // Chromium's own network emulation makes the transfer slow enough to be cancelled half-way.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 20_000, uploadThroughput: -1 })
    const downloads: unknown[] = []
    page.on('download', (file) => downloads.push(file))
    await download(page)
    await page.getByText(/^Received [\d,]+ rows/).waitFor()
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.getByRole('alert').filter({ hasText: 'The download was cancelled. No file was left behind.' }).waitFor()
    expect(downloads).toEqual([])
    await page.context().close()
  })

  test('a dialog closed without choosing saves nothing and says so', async () => {
    const page = await ready(setup.server.base, setup.server.seeded().token)
    await setPicker(page, { cancel: true })
    await download(page)
    await page.getByRole('alert').filter({ hasText: 'Nothing was saved: the Save dialog was closed.' }).waitFor()
    expect((await pickerRecord(page)).files).toEqual({})
    await page.context().close()
  })

  test('when the server answered too late for the dialog to open by itself, one more click opens it', async () => {
    const page = await ready(setup.server.base, setup.server.seeded().token, VIEWPORTS.phone)
    await setPicker(page, { noActivation: true })
    await download(page)
    const prompt = page.getByRole('alert').filter({ hasText: /The server is ready\. Press “Choose where to save”/ })
    await prompt.waitFor()
    await expectInViewport(page, prompt)
    const button = page.getByRole('button', { name: 'Choose where to save' })
    await expectInViewport(page, button)
    await screenshot(page, 'save-needs-click-360x740')
    // The long file name in the prompt wraps inside the phone's width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORTS.phone.width)
    expect((await pickerRecord(page)).dialogs).toEqual([])
    await button.click()
    await page.getByText(/^Saved tickets_20260301T000000Z_20260305T000000Z\.csv: 6 rows/).waitFor()
    expect((await pickerRecord(page)).dialogs.length).toBe(1)
    expect(await button.isHidden()).toBe(true)
    await page.context().close()
  })
})
