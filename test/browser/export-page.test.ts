import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { startServer, type TestServer } from '../support/harness.ts'
import { ARTIFACTS, chromiumAvailable, launchChromium, openPage as open, setRange, useToken, type OpenOptions } from './support.ts'

/** End-to-end in real headless Chromium (Debian's package): the Blob save path, as in Firefox and Safari. */
describe.skipIf(!chromiumAvailable)('the export page in Chromium', () => {
  let server: TestServer
  let browser: Browser
  let paidToken: string
  let demoToken: string
  let limitedServer: TestServer
  let limitedToken: string

  beforeAll(async () => {
    server = await startServer()
    limitedServer = await startServer({ rateLimitPerMinute: 2 })
    paidToken = server.seeded().token
    demoToken = server.seeded({ plan: 'demo' }).token
    limitedToken = limitedServer.seeded().token
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await limitedServer?.close()
  })

  function openPage(base: string, path = '/', options: OpenOptions = {}): Promise<{ page: Page; requests: string[] }> {
    return open(browser, base, { path, ...options })
  }

  test('token, queue and range, preview, download: the file equals the direct export', async () => {
    const { page, requests } = await openPage(server.base)
    await useToken(page, paidToken)
    await page.getByRole('checkbox', { name: 'Schalter 1 — Ämter' }).check()
    await setRange(page, '2026-03-01', '2026-03-04')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByRole('cell', { name: 't-004' }).waitFor()
    expect(await page.locator('#preview-table tbody tr').count()).toBe(3)
    await page.screenshot({ path: join(ARTIFACTS, 'export-page.png'), fullPage: true })

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    expect(download.suggestedFilename()).toBe('tickets_20260301T000000Z_20260305T000000Z.csv')
    const saved = readFileSync((await download.path())!)
    const direct = await (await server.get('/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-05&queueId=q_zh', paidToken)).arrayBuffer()
    expect(saved.equals(Buffer.from(direct))).toBe(true)
    await page.getByText(/Downloaded tickets_20260301T000000Z_20260305T000000Z\.csv: 3 rows/).waitFor()

    // The token never appears in a URL the page requested, and no request left the server.
    expect(requests.every((url) => url.startsWith(server.base))).toBe(true)
    expect(requests.some((url) => url.includes(paidToken))).toBe(false)
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(['queue-analytics-token'])
    await page.context().close()
  })

  test('a bad token gets the 401 sentence', async () => {
    const { page } = await openPage(server.base)
    await useToken(page, 'svc_this-is-not-a-token')
    await page.getByRole('alert').getByText(/token was not accepted/).waitFor()
    await page.context().close()
  })

  test('a range over 90 days is explained before any request', async () => {
    const { page, requests } = await openPage(server.base)
    await useToken(page, paidToken)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    const before = requests.length
    await setRange(page, '2026-01-01', '2026-04-30')
    // The line above the buttons says what is limited (a file) and what is not (the charts).
    expect(await page.locator('#summary').textContent()).toBe(
      'Charts only: all queues, all statuses, 1 Jan – 30 Apr 2026 (120 days). A file covers at most 90 days, so Preview and Download need a shorter range; the charts take any range.',
    )
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByRole('alert').getByText(/120 days; one file covers at most 90/).waitFor()
    expect(requests.length).toBe(before)
    await page.context().close()
  })

  test("a demo organisation's download is named demo-… and the page says it is marked", async () => {
    const { page } = await openPage(server.base)
    await useToken(page, demoToken)
    // The notice itself: the hint under the token field also says "a demo organisation's" and is always shown.
    await page.locator('#demo-notice').waitFor()
    expect(await page.locator('#demo-notice').isVisible()).toBe(true)
    await setRange(page, '2026-03-01', '2026-03-04')
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    expect(download.suggestedFilename()).toBe('demo-tickets_20260301T000000Z_20260305T000000Z.csv')
    expect(readFileSync((await download.path())!, 'utf8').split('\r\n')[0]).toEndWith(',demo')
    await page.context().close()
  })

  test('a 429 shows a countdown from Retry-After', async () => {
    const { page } = await openPage(limitedServer.base)
    await useToken(page, limitedToken) // request 1
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-04')
    await page.getByRole('button', { name: 'Preview' }).click() // request 2
    await page.getByRole('cell', { name: 't-001' }).waitFor()
    await page.getByRole('button', { name: 'Preview' }).click() // request 3: 429
    await page.getByRole('alert').getByText(/You can try again in \d+ seconds?\./).waitFor()
    const first = await page.getByRole('alert').textContent()
    await page.waitForFunction((text) => document.getElementById('message')?.textContent !== text, first, { timeout: 5000 })
    const later = await page.getByRole('alert').textContent()
    const seconds = (text: string | null) => Number(/in (\d+) second/.exec(text ?? '')?.[1])
    expect(seconds(later)).toBeLessThan(seconds(first))
    await page.context().close()
  })

  test('/docs renders the reference with no request leaving 127.0.0.1', async () => {
    const { page, requests } = await openPage(server.base, '/docs')
    await page.locator('.opblock').first().waitFor()
    // The three operations and the CORS preflight of each.
    expect(await page.locator('.opblock-get').count()).toBe(3)
    expect(await page.locator('.opblock-options').count()).toBe(3)
    expect(await page.getByText('/v1/exports/tickets.csv').count()).toBeGreaterThan(0)
    expect(requests.filter((url) => !url.startsWith(server.base))).toEqual([])
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png') })
    await page.context().close()
  })

  test('the page is usable on a narrow screen and by keyboard', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } })
    const page = await context.newPage()
    await page.goto(server.base)
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    expect(width).toBeLessThanOrEqual(360)
    // Tab from the top reaches the token field, then its button; Enter submits.
    await page.keyboard.press('Tab') // the docs link
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('token')
    await page.keyboard.type(paidToken)
    await page.keyboard.press('Enter')
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    // Every input has an accessible name.
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll('input')].filter((input) => !input.labels?.length && !input.getAttribute('aria-label')).length,
    )
    expect(unnamed).toBe(0)
    await context.close()
  })
})
