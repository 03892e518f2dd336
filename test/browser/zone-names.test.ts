import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { browserSetup, chromiumAvailable, openPage, seriousViolations, setRange, useToken } from './support.ts'

/**
 * Zone names on the page in real Chromium, whose Intl calls India's zone by its old name
 * (`Asia/Calcutta`): the page shows, uses and names files after `Asia/Kolkata`, as the API
 * serves a location's zone; an abbreviation such as `IST` (India's, Israel's and Ireland's) or
 * an offset is refused, naming the zones it may mean.
 */

const SIZES = { laptop: { width: 1366, height: 768 }, phone: { width: 390, height: 844 } } as const

/**
 * The zone field's refusal as seen and heard: whether the field's description names the alert
 * that shows it, whether that alert is drawn within 40 px under the field, and its text.
 */
function refusalBesideField(page: Page) {
  return page.evaluate(() => {
    const field = document.getElementById('zone')!
    const alerts = [...document.querySelectorAll<HTMLElement>('[role="alert"]')].filter((alert) => !alert.hidden && alert.textContent !== '')
    const alert = alerts.find((node) => node.textContent!.includes('zone') || node.textContent!.includes('abbreviation') || node.textContent!.includes('offset'))
    if (!alert) return { describedBy: false, gap: false, text: '' }
    const below = alert.getBoundingClientRect().top - field.getBoundingClientRect().bottom
    return { describedBy: (field.getAttribute('aria-describedby') ?? '').split(' ').includes(alert.id), gap: below >= 0 && below <= 40, text: alert.textContent! }
  })
}

describe.skipIf(!chromiumAvailable)('zone names on the page', () => {
  const setup = browserSetup({ server: {} })

  test('a browser in Asia/Kolkata: the zone by its current name in the control, the list, the help and the file name', async () => {
    const { token } = setup.server.seeded()
    const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: 'Asia/Kolkata' })
    // Chromium itself still says Asia/Calcutta: the page must not repeat it.
    expect(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe('Asia/Calcutta')
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Asia/Kolkata')
    expect(await page.locator('#zone-help').textContent()).toContain('Days are local days in Asia/Kolkata (UTC+05:30 now)')
    const listed = await page.locator('#zone-names option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))
    expect(listed).toContain('Asia/Kolkata')
    expect(listed).toContain('Europe/Kyiv')
    expect(listed.filter((zone) => ['Asia/Calcutta', 'Europe/Kiev', 'Asia/Saigon'].includes(zone))).toEqual([])

    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-05')
    await page.getByLabel('Add names and local times').check()
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    // 1 March 00:00 in Kolkata is 28 February 18:30 UTC.
    expect(download.suggestedFilename()).toBe('tickets_20260228T183000Z_20260305T183000Z_names_Asia-Kolkata.csv')
  })

  for (const [size, viewport] of Object.entries(SIZES)) {
    for (const colorScheme of ['light', 'dark'] as const) {
      test(`${size}, ${colorScheme}: IST and an offset are refused with the zones they may mean; the old name is taken as the new`, async () => {
        const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: 'Europe/Dublin', viewport, colorScheme })
        const zone = page.getByLabel('Time zone')
        await zone.fill('IST')
        await zone.press('Enter')
        await page.getByRole('alert').filter({ hasText: '“IST” is an abbreviation, not a time zone, and more than one place uses it: type or pick the place\'s zone, such as Asia/Kolkata, Asia/Jerusalem or Europe/Dublin; the days stay in Europe/Dublin.' }).waitFor()
        expect(await zone.getAttribute('aria-invalid')).toBe('true')
        // The refusal is under the field, not at the foot of the range, and read with the field.
        expect(await refusalBesideField(page)).toEqual({ describedBy: true, gap: true, text: expect.stringContaining('“IST” is an abbreviation') })
        expect(await page.locator('#zone-help').textContent()).toContain('local days in Europe/Dublin')
        expect(await page.evaluate(() => sessionStorage.getItem('queue-analytics-zone'))).toBeNull()
        expect(await seriousViolations(page)).toEqual([])

        await zone.fill('+05:30')
        await zone.press('Enter')
        await page.getByRole('alert').filter({ hasText: '“+05:30” is an offset, not a time zone: it knows no daylight saving time.' }).waitFor()

        await zone.fill('asia/calcutta')
        await zone.press('Enter')
        expect(await zone.inputValue()).toBe('Asia/Kolkata')
        expect(await zone.getAttribute('aria-invalid')).toBeNull()
        expect(await refusalBesideField(page)).toEqual({ describedBy: false, gap: false, text: '' })
        expect(await page.locator('#zone-help').textContent()).toContain('Days are local days in Asia/Kolkata')
        expect(await page.evaluate(() => sessionStorage.getItem('queue-analytics-zone'))).toBe('Asia/Kolkata')
        expect(await seriousViolations(page)).toEqual([])
      })
    }
  }
})
