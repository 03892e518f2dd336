import { describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { startServer } from '../support/harness.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { SCRIPT_BUILD } from '../../src/web/routes.ts'
import { VIEWPORTS, browserSetup, chromiumAvailable, expectInViewport, openPage, screenshot, setRange, useToken } from './support.ts'

/** The rest of what an analyst meets on the page: what it says about the token, the file name, the layout. */
describe.skipIf(!chromiumAvailable)('the export page', () => {
  const setup = browserSetup({ server: {} })

  test('/favicon.ico is served, and loading / and /docs meets no error status', async () => {
    const icon = await fetch(`${setup.server.base}/favicon.ico`)
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toBe('image/x-icon')
    expect([...new Uint8Array(await icon.arrayBuffer()).slice(0, 4)]).toEqual([0, 0, 1, 0]) // an ICO header
    for (const path of ['/', '/docs']) {
      const { page } = await openPage(setup.browser, setup.server.base, { path })
      const failures: string[] = []
      page.on('response', (response) => {
        if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`)
      })
      await page.reload({ waitUntil: 'networkidle' })
      expect(failures).toEqual([])
      await page.context().close()
    }
  })

  test("the page calls the API through the project's client: the same module as src/client/, in the browser", async () => {
    const built = await Bun.build({ entrypoints: [join(import.meta.dir, '..', '..', 'src', 'client', 'index.ts')], ...SCRIPT_BUILD })
    const served = await (await fetch(`${setup.server.base}/assets/client.js`)).text()
    expect(served).toBe(await built.outputs[0]!.text())
    const { page, requests } = await openPage(setup.browser, setup.server.base)
    await useToken(page, setup.server.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    expect(requests.some((url) => url.endsWith('/assets/client.js'))).toBe(true)
    // The client's own mark on a request: a day becomes its canonical instant.
    await setRange(page, '2026-03-01', '2026-03-04')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.locator('#preview-table th').first().waitFor()
    expect(requests.find((url) => url.includes('/v1/tickets?'))).toContain('from=2026-03-01T00%3A00%3A00.000Z')
    await page.context().close()
  })

  test('says which organisation the token belongs to (by its locations), how to get a token, and that Use token spends a request', async () => {
    const { page, requests } = await openPage(setup.browser, setup.server.base)
    await page.getByText('npm run -s admin -- token create --org <org> --name <name>').waitFor()
    const said = page.locator('#token-form').getByText("Use token sends one request (GET /v1/queues): it counts as any other, on a demo organisation's daily quota too.")
    expect(await said.isVisible()).toBe(true)
    const { token } = setup.server.seeded()
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    expect(await page.locator('#token-status').textContent()).toBe(
      `Token ${token.slice(0, 8)}… is in use for this tab. It belongs to the organisation with 4 locations: ` +
        'Amsterdam Centraal (amsterdam), Amsterdam Centraal (amsterdam-2), Zürich Hauptbahnhof and 1 more.',
    )
    // The one request the line speaks of.
    expect(requests.filter((url) => url.includes('/v1/')).map((url) => new URL(url).pathname)).toEqual(['/v1/queues'])
    // The token itself is never shown, nor left in the field.
    expect(await page.locator('body').innerText()).not.toContain(token)
    expect(await page.getByLabel(/Paste an API token/).inputValue()).toBe('')
    await page.context().close()
  })

  test("next to To, the file name's exclusive end; the file is named so", async () => {
    const { page } = await openPage(setup.browser, setup.server.base)
    await useToken(page, setup.server.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-20')
    expect(await page.locator('#to-help').textContent()).toBe(
      "To is included: the file name ends with the UTC instant of the midnight after it (…_20260321T000000Z.csv), because the API's end is exclusive.",
    )
    expect(await page.getByLabel('To (included)').getAttribute('aria-describedby')).toContain('to-help')
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    expect(download.suggestedFilename()).toBe('tickets_20260301T000000Z_20260321T000000Z.csv')
    await page.context().close()
  })

  test('east of UTC the hint stays true: the name ends with the UTC instant of the midnight after To, the day To itself', async () => {
    const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: 'Europe/Amsterdam' })
    await useToken(page, setup.server.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-11-20', '2026-11-26')
    expect(await page.locator('#to-help').textContent()).toBe(
      "To is included: the file name ends with the UTC instant of the midnight after it (…_20261126T230000Z.csv), because the API's end is exclusive.",
    )
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    expect(download.suggestedFilename()).toBe('tickets_20261119T230000Z_20261126T230000Z.csv')
    // One day is said once.
    await setRange(page, '2026-11-20', '2026-11-20')
    await page.getByText(/^Will export: .*, 20 Nov 2026 \(1 day\)\.$/).waitFor()
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByText(/, 20 Nov 2026\.$/).first().waitFor()
    expect(await page.locator('main').innerText()).not.toContain('20 Nov – 20 Nov')
    await page.context().close()
  })

  test('at 360 px every legend stays on one line inside its fieldset, and nothing is wider than the screen', async () => {
    const { page } = await openPage(setup.browser, setup.server.base, { viewport: VIEWPORTS.phone })
    await useToken(page, setup.server.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    const legends = await page.locator('legend').evaluateAll((all) =>
      all.map((legend) => {
        const box = legend.getBoundingClientRect()
        const fieldset = legend.parentElement!.getBoundingClientRect()
        const lineHeight = parseFloat(getComputedStyle(legend).lineHeight)
        return { text: legend.textContent, oneLine: box.height <= lineHeight * 1.2, inside: box.left >= fieldset.left && box.right <= fieldset.right }
      }),
    )
    expect(legends.map((legend) => legend.text)).toEqual(['Date range', 'Days and hours', 'Locations and queues', 'Statuses'])
    for (const legend of legends) expect(legend).toMatchObject({ oneLine: true, inside: true })
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORTS.phone.width)
    await page.locator('#places').scrollIntoViewIfNeeded()
    await screenshot(page, 'legends-360x740')
    await page.context().close()
  })

  test("an organisation whose data cannot be read: said next to the token, which stays in the field to try again", async () => {
    const { org, token } = setup.server.seeded()
    rmSync(tenantFilePath(setup.server.dataDir, org.id))
    const { page } = await openPage(setup.browser, setup.server.base)
    await useToken(page, token)
    const message = page.getByRole('alert').filter({ hasText: "The organisation's data cannot be read right now." })
    await message.waitFor()
    await expectInViewport(page, message)
    expect(await page.locator('#token-status').textContent()).toBe('No token in use.')
    expect(await page.getByLabel(/Paste an API token/).inputValue()).toBe(token)
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await page.context().close()
  })

  test('a server that went away: "could not be reached", under the buttons', async () => {
    const gone = await startServer()
    const { page } = await openPage(setup.browser, gone.base)
    await useToken(page, gone.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await gone.close()
    await page.getByRole('button', { name: 'Preview' }).click()
    const message = page.getByRole('alert').filter({ hasText: 'The server could not be reached. Check your connection and try again.' })
    await message.waitFor()
    await expectInViewport(page, message)
    await page.context().close()
  })
})
