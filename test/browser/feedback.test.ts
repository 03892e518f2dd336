import { describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import {
  ARTIFACTS, VIEWPORTS, browserSetup, chromiumAvailable, expectAnnounced, expectInViewport, openPage, organisationWithManyTickets, screenshot, setRange, useToken,
  type OpenOptions, type ViewportName,
} from './support.ts'
import { RawHttpClient, eventually } from '../support/raw-http.ts'

/**
 * Every error an analyst can meet is shown where they look (inside the viewport, at a laptop's
 * and a phone's size) and read out by a screen reader; a token that the server refused is never
 * presented as the token in use.
 */
describe.skipIf(!chromiumAvailable)('feedback on the export page', () => {
  const setup = browserSetup({ server: {}, limited: { rateLimitPerMinute: 2 }, quota: { demoDailyQuota: 2 }, exports: { exportsPerToken: 1 } })

  const alert = (page: Page, text: RegExp) => page.getByRole('alert').filter({ hasText: text })

  /** The alert with `text` appears, lies inside the viewport and is announced; a screenshot is kept. */
  async function expectSeen(page: Page, message: Locator, shot: string) {
    await message.waitFor()
    await expectInViewport(page, message)
    await expectAnnounced(message)
    await screenshot(page, shot)
  }

  /** Nothing on the page claims that a token is in use, and none is kept. */
  async function expectNoTokenInUse(page: Page) {
    expect(await page.locator('#token-status').textContent()).toBe('No token in use.')
    expect(await page.locator('body').innerText()).not.toMatch(/is in use|Token accepted/)
    const field = page.getByLabel(/Paste an API token/)
    expect(await field.inputValue()).toBe('')
    expect(await field.getAttribute('placeholder')).toBeNull()
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    expect(await page.getByRole('button', { name: 'Preview' }).isDisabled()).toBe(true)
    expect(await page.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true)
  }

  for (const size of Object.keys(VIEWPORTS) as ViewportName[]) {
    const viewport = VIEWPORTS[size]
    const at = `${viewport.width}x${viewport.height}`
    const open = (base: string, options: OpenOptions = {}) => openPage(setup.browser, base, { viewport, ...options })

    describe(`at ${viewport.width}×${viewport.height}`, () => {
      test('a mistyped token: the 401 is next to the field and announced; the token is neither kept nor shown as in use', async () => {
        const { page } = await open(setup.server.base)
        await useToken(page, 'svc_this-is-not-a-token')
        await expectSeen(page, alert(page, /token was not accepted/), `401-${at}`)
        await expectNoTokenInUse(page)
        expect(await page.evaluate(() => document.activeElement?.id)).toBe('token')
        await page.context().close()
      })

      test('a token revoked while in use: the 401 of a preview drops it and says so next to the token field', async () => {
        const { org } = setup.server.seeded()
        const { id, token } = setup.server.token(org.id)
        const { page } = await open(setup.server.base)
        await useToken(page, token)
        await page.getByText(/is in use for this tab/).waitFor()
        setup.server.app.store.revokeToken(id, new Date().toISOString())
        await page.getByRole('button', { name: 'Preview' }).click()
        await expectSeen(page, alert(page, /token was not accepted/), `401-revoked-${at}`)
        await expectNoTokenInUse(page)
        await page.context().close()
      })

      test('an organisation without the API feature: the 402 is next to the field and the token is not kept', async () => {
        const { token } = setup.server.organisation({ apiEnabled: false })
        const { page } = await open(setup.server.base)
        await useToken(page, token)
        await expectSeen(page, alert(page, /API feature is not enabled/), `402-${at}`)
        await expectNoTokenInUse(page)
        await page.context().close()
      })

      test('a 429 under the buttons counts down, then says "try again now" in a colour that is not the error red', async () => {
        const { page } = await open(setup.limited.base, { fakeClock: true })
        await useToken(page, setup.limited.seeded().token) // request 1
        await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
        await setRange(page, '2026-03-01', '2026-03-04')
        await page.getByRole('button', { name: 'Preview' }).click() // request 2
        await page.getByRole('cell', { name: 't-001' }).waitFor()
        await page.getByRole('button', { name: 'Preview' }).click() // request 3: 429
        const message = alert(page, /You can try again in \d+ seconds?\./)
        await expectSeen(page, message, `429-${at}`)
        // Under an error, the previous preview is gone.
        expect(await page.locator('#preview-section').isVisible()).toBe(false)
        await page.clock.runFor(61_000)
        const done = alert(page, /^You can try again now\.$/)
        await done.waitFor()
        const colours = await done.evaluate((element) => ({
          text: getComputedStyle(element).color,
          bad: getComputedStyle(document.documentElement).getPropertyValue('--bad').trim(),
        }))
        expect(await done.getAttribute('class')).toContain('info')
        expect(colours.text).not.toBe('rgb(164, 22, 26)') // --bad, #a4161a
        expect(colours.bad).toBe('#a4161a')
        await page.context().close()
      })

      test("a demo organisation sees its day's setup.quota, and the 429 when it is used up", async () => {
        const { page, requests } = await open(setup.quota.base)
        await useToken(page, setup.quota.seeded({ plan: 'demo' }).token) // 1 of 2
        await page.getByText('1 of 2 requests left today; each preview or download uses one.').waitFor()
        await page.screenshot({ path: `${ARTIFACTS}/demo-quota-line-${at}.png`, fullPage: true })
        await setRange(page, '2026-03-01', '2026-03-04')
        await page.getByRole('button', { name: 'Preview' }).click() // 2 of 2
        await page.getByText(/^No requests left today: the quota of 2 resets at/).waitFor()
        await page.getByRole('button', { name: 'Preview' }).click() // 429 demo_quota_exceeded
        await expectSeen(page, alert(page, /demo organisation has used its 2 requests for today/), `429-demo-quota-${at}`)
        expect(requests.filter((url) => url.includes('/v1/')).length).toBe(3)
        await page.context().close()
      })

      test('a download while the token already runs as many exports as allowed: the 429 says so and counts down', async () => {
        const token = organisationWithManyTickets(setup.exports, 100_000, 60)
        // Another program's export of this token, held open by a reader that does not read.
        const held = await RawHttpClient.get(setup.exports.base, '/v1/exports/tickets.csv?from=2026-03-01&to=2026-05-29', { Authorization: `Bearer ${token}` }, { paused: true })
        try {
          await eventually(() => setup.exports.app.pool.stats().leased === 1, 5000, 'the held export to start')
          const { page } = await open(setup.exports.base)
          await useToken(page, token)
          await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
          await setRange(page, '2026-03-01', '2026-03-04')
          await page.getByRole('button', { name: 'Download CSV' }).click()
          await expectSeen(page, alert(page, /Other downloads are still running, with this token or on the server.*You can try again in 5 seconds\./), `429-too-many-exports-${at}`)
          await page.context().close()
        } finally {
          held.destroy()
        }
      })

      test('a range over 90 days: the message is next to the dates, announced, and the To field is marked', async () => {
        const { page, requests } = await open(setup.server.base)
        await useToken(page, setup.server.seeded().token)
        await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
        const before = requests.length
        await setRange(page, '2026-01-01', '2026-04-30')
        await page.getByRole('button', { name: 'Preview' }).click()
        await expectSeen(page, alert(page, /120 days; one file covers at most 90/), `range-over-90-days-${at}`)
        expect(await page.getByLabel('To (included)').getAttribute('aria-invalid')).toBe('true')
        expect(await page.evaluate(() => document.activeElement?.id)).toBe('to')
        expect(requests.length).toBe(before)
        await page.context().close()
      })
    })
  }

  test('without a token, Preview and Download are disabled and no request is sent (no "Bearer null")', async () => {
    const { page, requests } = await openPage(setup.browser, setup.server.base)
    expect(await page.getByRole('button', { name: 'Preview' }).isDisabled()).toBe(true)
    expect(await page.getByRole('button', { name: 'Download CSV' }).isDisabled()).toBe(true)
    expect(await page.getByRole('button', { name: 'Charts' }).isDisabled()).toBe(true)
    await page.getByText('Preview and Download work once a token is accepted.').waitFor()
    // Enter in a date field would submit the form: with no token, nothing happens.
    await page.getByLabel('From').press('Enter')
    await page.getByLabel('Paste an API token').press('Enter')
    await alert(page, /Paste a token first/).waitFor()
    expect(requests.filter((url) => url.includes('/v1/'))).toEqual([])
    await page.context().close()
  })

  test('reloading the page with a token in use spends no request and still shows the organisation and its quota', async () => {
    const { page, requests } = await openPage(setup.browser, setup.quota.base)
    await useToken(page, setup.quota.seeded({ plan: 'demo' }).token)
    await page.getByText('1 of 2 requests left today; each preview or download uses one.').waitFor()
    const before = requests.filter((url) => url.includes('/v1/')).length
    await page.reload()
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await page.getByText(/^1 of 2 requests left today \(as of .+\); each preview or download uses one\.$/).waitFor()
    await page.getByText(/is in use for this tab\. It belongs to a demo organisation with 4 locations/).waitFor()
    expect(requests.filter((url) => url.includes('/v1/')).length).toBe(before)
    await page.context().close()
  })

  test('dates the API cannot read get a message that names them, not "choose both dates"', async () => {
    const { page, requests } = await openPage(setup.browser, setup.server.base)
    await useToken(page, setup.server.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    const before = requests.length
    const setDate = (id: string, value: string) =>
      page.evaluate(([id, value]) => {
        const input = document.getElementById(id!) as HTMLInputElement
        input.value = value!
        input.dispatchEvent(new Event('input', { bubbles: true }))
      }, [id, value])

    await setDate('from', '9999-12-01')
    await setDate('to', '10000-01-05')
    expect(await page.getByLabel('To (included)').inputValue()).toBe('10000-01-05') // Chromium keeps a year of five digits
    await page.getByRole('button', { name: 'Preview' }).click()
    await alert(page, /^The To date is in the year 10000; the API reads dates up to the year 9999\.$/).waitFor()

    await setDate('to', '9999-12-31')
    await page.getByRole('button', { name: 'Preview' }).click()
    await alert(page, /^The last To date the API can export is 9999-12-30/).waitFor()

    await setDate('from', '')
    await page.getByRole('button', { name: 'Preview' }).click()
    await alert(page, /^Choose a From date/).waitFor()
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('from')

    await setRange(page, '2026-03-05', '2026-03-01')
    await page.getByRole('button', { name: 'Preview' }).click()
    await alert(page, /^The To date must be on or after the From date\.$/).waitFor()
    expect(requests.length).toBe(before)
    await page.context().close()
  })
})
