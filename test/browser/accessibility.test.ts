import { describe, expect, test } from 'bun:test'
import { ARTIFACTS, browserSetup, seriousViolations, VIEWPORTS, chromiumAvailable, openPage, screenshot, setRange, useToken } from './support.ts'

/**
 * An automated accessibility check of both pages in every state that shows something new:
 * no violation that axe-core rates serious or critical.
 */
describe.skipIf(!chromiumAvailable)('accessibility (axe-core)', () => {
  const setup = browserSetup({ server: {} })

  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    test(`/ as it loads, with an error, and with a preview (${size})`, async () => {
      const { page } = await openPage(setup.browser, setup.server.base, { viewport })
      expect(await seriousViolations(page)).toEqual([])

      await useToken(page, 'svc_this-is-not-a-token')
      await page.getByRole('alert').filter({ hasText: /token was not accepted/ }).waitFor()
      expect(await seriousViolations(page)).toEqual([])

      await useToken(page, setup.server.seeded({ plan: 'demo' }).token)
      await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
      await setRange(page, '2026-03-01', '2026-03-04')
      await page.getByRole('checkbox', { name: 'Payments' }).check()
      await page.getByRole('button', { name: 'Preview' }).click()
      await page.getByRole('cell', { name: 't-001' }).waitFor()
      expect(await seriousViolations(page)).toEqual([])
      await page.context().close()
    })

    test(`/docs, the API reference (${size})`, async () => {
      const { page } = await openPage(setup.browser, setup.server.base, { viewport, path: '/docs' })
      await page.locator('.opblock').first().waitFor()
      expect(await seriousViolations(page)).toEqual([])
      // Opened, the operations show their parameters, responses and schemas.
      for (const summary of await page.locator('.opblock-summary-control').all()) await summary.click()
      await page.locator('.opblock-body').nth(2).waitFor()
      await screenshot(page, `docs-opened-${viewport.width}x${viewport.height}`)
      expect(await seriousViolations(page)).toEqual([])
      await page.context().close()
    })
  }

  test('/docs links back to the export page; a deep link still opens its operation (with its path no longer a link)', async () => {
    const { page } = await openPage(setup.browser, setup.server.base, { path: '/docs#/Tickets/listTickets' })
    await page.locator('#operations-Tickets-listTickets .opblock-body').waitFor()
    expect(await page.locator('.opblock-summary-control a').count()).toBe(0)
    await page.getByRole('link', { name: '← Ticket export page' }).click()
    await page.getByRole('heading', { name: 'Ticket export' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/')
    await page.context().close()
  })

  test('dark theme (prefers-color-scheme: dark): the page, a preview and the charts, axe clean, in dark colours', async () => {
    const { page } = await openPage(setup.browser, setup.server.base, { colorScheme: 'dark' })
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)).toBe('rgb(20, 23, 28)')
    expect(await seriousViolations(page)).toEqual([])
    await useToken(page, setup.server.seeded().token)
    await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-04')
    await page.getByRole('button', { name: 'Preview' }).click()
    await page.getByRole('cell', { name: 't-001' }).waitFor()
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/^Charts drawn from/).waitFor()
    for (const details of await page.locator('#charts-list details').all()) await details.locator('summary').click()
    expect(await seriousViolations(page)).toEqual([])
    // The charts' text is drawn in the page's light text colour, not Plot's black.
    expect(await page.locator('#chart-wait .plot svg').first().evaluate((svg) => getComputedStyle(svg).color)).toBe('rgb(230, 233, 238)')
    // The heat map's emphasis as in the light theme: an empty hour is the panel's colour, the
    // busiest the brightest, standing out from the panel.
    const cells = await page.locator('#chart-arrivals svg rect').evaluateAll((rects) =>
      rects.flatMap((rect) => {
        const count = /^\w{3} \d+:00: (\d+)$/.exec(rect.querySelector('title')?.textContent ?? '')?.[1]
        return count === undefined ? [] : [{ count: Number(count), fill: getComputedStyle(rect).fill }]
      }),
    )
    const panel = await page.locator('#charts-section').evaluate((section) => getComputedStyle(section).backgroundColor)
    const empty = cells.find((cell) => cell.count === 0)!
    const busiest = cells.reduce((a, b) => (b.count > a.count ? b : a))
    expect(cells).toHaveLength(7 * 24)
    expect(busiest.count).toBeGreaterThan(0)
    expect(contrast(empty.fill, panel)).toBeLessThan(1.1)
    expect(contrast(busiest.fill, panel)).toBeGreaterThanOrEqual(3)
    expect(cells.every((cell) => contrast(cell.fill, panel) <= contrast(busiest.fill, panel) + 1e-9)).toBe(true)
    await page.screenshot({ path: `${ARTIFACTS}/dark-theme.png`, fullPage: true })
    await page.context().close()
  })

  for (const colorScheme of ['light', 'dark'] as const)
  test(`the focus ring stands out from the panel and the page by at least 3:1 (WCAG 1.4.11), ${colorScheme} theme`, async () => {
    const { page } = await openPage(setup.browser, setup.server.base, { colorScheme })
    await page.keyboard.press('Tab') // the docs link
    await page.keyboard.press('Tab') // the token field, on the panel
    const colours = await page.evaluate(() => {
      const focused = document.activeElement as HTMLElement
      const style = getComputedStyle(focused)
      return {
        id: focused.id,
        outline: style.outlineColor,
        outlineWidth: style.outlineWidth,
        panel: getComputedStyle(focused.closest('section')!).backgroundColor,
        page: getComputedStyle(document.body).backgroundColor,
      }
    })
    expect(colours.id).toBe('token')
    expect(colours.outlineWidth).toBe('3px')
    expect(contrast(colours.outline, colours.panel)).toBeGreaterThanOrEqual(3)
    expect(contrast(colours.outline, colours.page)).toBeGreaterThanOrEqual(3)
    await page.context().close()
  })
})

/** The WCAG contrast ratio of two CSS rgb()/rgba() colours. */
function contrast(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r, g, bl] = colour.match(/[\d.]+/g)!.slice(0, 3).map((part) => {
      const c = Number(part) / 255
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!
  }
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (light! + 0.05) / (dark! + 0.05)
}
