import { describe, expect, test } from 'bun:test'
import { writeBulkTickets } from '../support/fixtures.ts'
import { openTenant, type TestServer } from '../support/harness.ts'
import type { Page } from 'playwright-core'
import { join } from 'node:path'
import { ARTIFACTS, VIEWPORTS, ZOOMED, browserSetup, chartTextProblems, chromiumAvailable, openPage, screenshot, setRange, useToken } from './support.ts'

/**
 * The charts' text at real volumes: 21,600 tickets a day (a left axis in the tens of thousands)
 * in queues and locations with long names, at a laptop's size, a phone's and the laptop's at
 * 200 % zoom. No tick label, axis title or legend text may be cut by its chart's edge or drawn
 * over another, in the daily and the weekly view.
 */

const LONG_LOCATION = 'Amsterdam Centraal Station, Stationsplein Hall East — Customer Service Desk'
const LONG_QUEUE = 'Payments, refunds and every other money matter (counters 4 to 9)'
/** The fewest letters of a name a label may show before its "…": "Amsterdam…" reads, "A…" does not. */
const READABLE = 10

/** The labels beside the rows of a per-queue chart, as drawn: each a location and a queue (one line or two). */
function queueRowLabels(page: Page, chart: string): Promise<{ location: string; queue: string }[]> {
  return page.locator(`#${chart} svg text`).evaluateAll((texts) =>
    texts.flatMap((text) => {
      const lines = [...text.querySelectorAll('tspan')].map((line) => line.textContent!)
      if (lines.length === 2) return [{ location: lines[0]!, queue: lines[1]! }]
      const [location, queue] = text.textContent!.split(' · ')
      return queue === undefined ? [] : [{ location: location!, queue }]
    }),
  )
}

/** The name as a label shows it: whole, or at least READABLE letters of its start and end with "…" between (or after, ending it). */
function readableAs(shown: string, whole: string): boolean {
  const [head, tail, more] = shown.split('…')
  return shown === whole || (more === undefined && tail !== undefined && head!.length + tail.length >= READABLE && whole.startsWith(head!) && whole.endsWith(tail) && head!.length + tail.length < whole.length)
}

/** 7 days from Monday 2 March 2026, three queues with a ticket every 12 s each: 21,600 a day. */
function busyOrganisation(server: TestServer): string {
  const { org, token } = server.organisation()
  const db = openTenant(server.dataDir, org.id)
  db.exec(`
    INSERT INTO locations (id, name, slug) VALUES ('loc_long', '${LONG_LOCATION}', 'long'), ('loc_b', 'Malmö', 'malmo');
    INSERT INTO queues (id, location_id, name, slug, status) VALUES
      ('q_long', 'loc_long', '${LONG_QUEUE}', 'long', 'ACTIVE'),
      ('q_pay', 'loc_long', 'Payments', 'payments', 'ACTIVE'),
      ('q_pay_b', 'loc_b', 'Payments', 'payments', 'ACTIVE');
  `)
  for (const [queueId, locationId] of [['q_long', 'loc_long'], ['q_pay', 'loc_long'], ['q_pay_b', 'loc_b']] as const) {
    writeBulkTickets(db, { count: 7 * 7200, everySeconds: 12, start: '2026-03-02', queueId, locationId, idPrefix: `${queueId}-` })
  }
  // Some of every outcome, so that the outcome chart's legend and bars have them all.
  db.exec(`
    UPDATE tickets SET status = 'NO_SHOW', completed_at = NULL, no_show_at = called_at WHERE number % 7 = 1;
    UPDATE tickets SET status = 'CANCELED', completed_at = NULL, called_at = NULL, cancelled_at = created_at WHERE number % 11 = 2;
    UPDATE tickets SET status = 'SKIPPED', completed_at = NULL, skipped_at = called_at WHERE number % 13 = 3;
  `)
  db.close()
  return token
}

describe.skipIf(!chromiumAvailable)("the charts' text at 21,600 tickets a day with long names", () => {
  const setup = browserSetup({ server: {} })
  let token = ''

  const sizes = {
    '1280x720': { viewport: VIEWPORTS.desktop },
    '360x740': { viewport: VIEWPORTS.phone },
    '1280x720 at 200 % zoom': ZOOMED,
  }
  for (const [name, size] of Object.entries(sizes)) {
    test(`${name}: every tick label, axis title and legend entry whole and apart, per day and per week`, async () => {
      token ||= busyOrganisation(setup.server)
      const { page } = await openPage(setup.browser, setup.server.base, { ...size, timezoneId: 'Europe/Amsterdam' })
      await useToken(page, token)
      await page.getByRole('checkbox', { name: LONG_QUEUE }).waitFor()
      await setRange(page, '2026-03-02', '2026-03-08')
      await page.getByRole('button', { name: 'Charts' }).click()
      await page.getByText(/^Charts drawn from 15\d,\d{3} tickets/).waitFor({ timeout: 60_000 })
      // The counts that cut the axis before: a day's 21,600 tickets.
      expect(await page.locator('#chart-per-day .plot').textContent()).toContain('20,000')
      expect(await chartTextProblems(page)).toEqual([])
      // Beside the bars, three queues told apart, each name whole or readable (never "A…"), and
      // a location shortened alike on every row.
      for (const chart of ['chart-wait', 'chart-outcome']) {
        const labels = await queueRowLabels(page, chart)
        expect(labels).toHaveLength(3)
        expect(new Set(labels.map((label) => `${label.location} · ${label.queue}`)).size).toBe(3)
        expect(labels.filter((label) => label.queue === 'Payments')).toHaveLength(2)
        for (const { location, queue } of labels) {
          expect(readableAs(location, location.startsWith('Malmö') ? 'Malmö' : LONG_LOCATION)).toBe(true)
          expect(readableAs(queue, queue.startsWith('Payments,') ? LONG_QUEUE : 'Payments')).toBe(true)
        }
        expect(new Set(labels.filter((label) => label.location !== 'Malmö').map((label) => label.location)).size).toBe(1)
      }
      // In the numbers tables the names are left-aligned, the numbers right-aligned.
      const align = (cell: string) => page.locator(`#chart-wait table ${cell}`).first().evaluate((node) => getComputedStyle(node).textAlign)
      expect([await align('tbody th'), await align('tbody td'), await align('tbody td:nth-of-type(2)')]).toEqual(['left', 'left', 'right'])
      // The long names are whole in the table.
      expect(await page.locator('#chart-wait table').textContent()).toContain(LONG_QUEUE)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(size.viewport.width)
      await page.locator('#charts-section').scrollIntoViewIfNeeded()
      await screenshot(page, `charts-busy-${name.replaceAll(' ', '-').replace('%', 'pc')}`)
      await page.locator('#chart-wait').screenshot({ path: join(ARTIFACTS, `charts-busy-wait-${name.replaceAll(' ', '-').replace('%', 'pc')}.png`) })

      await page.getByLabel('Per week').check()
      await page.getByRole('heading', { name: 'Tickets per week' }).waitFor()
      expect(await page.locator('#chart-per-day table tbody th').allTextContents()).toEqual(['2026-03-02'])
      expect(await chartTextProblems(page)).toEqual([])
      await page.context().close()
    })
  }
})
