import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateTenantData } from '../../src/seed/generator.ts'
import { openTenant } from '../support/harness.ts'
import { queryDuckDb } from '../support/duckdb-query.ts'
import { browserSetup, chromiumAvailable, openPage, setRange, useToken } from './support.ts'

/**
 * The done-criterion of the charts: on generated data like the sample organisation's, the page's
 * local days and hours equal what the DuckDB queries of docs/page.md give on a `sync` mirror of
 * the same rows in the same zone. The queries are read from the docs, so the docs cannot drift.
 */

const DOCS_ZONE = 'Europe/Amsterdam'
const DOCS_FROM = '2026-10-27'
const DOCS_TO = '2026-11-25'
// Thirty days around the end of summer time in Europe (29 March 2026: a 23-hour day).
const ZONE = 'Europe/Amsterdam'
const FROM = '2026-03-15'
const TO = '2026-04-12'
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']

/** The four statements of the docs' SQL block after "### The charts", with this test's zone and days. */
function docsQueries(): Record<string, string> {
  const docs = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'page.md'), 'utf8')
  const section = docs.slice(docs.indexOf('### The charts'))
  const block = /```sql\n([\s\S]*?)```/.exec(section)![1]!
  const statements = block.split(';').map((statement) => statement.trim()).filter(Boolean)
  return Object.fromEntries(
    statements.map((statement) => {
      const title = /^-- ([^:]+):/.exec(statement)![1]!
      return [title, statement.replaceAll(`'${DOCS_ZONE}'`, `'${ZONE}'`).replaceAll(`'${DOCS_FROM}'`, `'${FROM}'`).replaceAll(`'${DOCS_TO}'`, `'${TO}'`)]
    }),
  )
}

describe.skipIf(!chromiumAvailable)('the charts against DuckDB', () => {
  const setup = browserSetup({ server: {} })

  test(`in ${ZONE}, the page's four tables equal the docs' DuckDB queries on a sync mirror`, async () => {
    const { org, token } = setup.server.organisation()
    const db = openTenant(setup.server.dataDir, org.id)
    generateTenantData(db, { days: 40, perDay: 150, seed: 'charts', now: Date.parse('2026-04-14T12:00:00Z') })
    db.close()

    const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: ZONE })
    await useToken(page, token)
    await page.getByText(/is in use for this tab/).waitFor()
    await setRange(page, FROM, TO)
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/^Charts drawn from/).waitFor()
    const tables: Record<string, string[][]> = await page.locator('#charts-list table').evaluateAll((all) =>
      Object.fromEntries(all.map((table) => [table.querySelector('caption')!.textContent!, [...table.querySelectorAll('tbody tr')].map((row) => [...row.children].map((cell) => cell.textContent!))])),
    )
    await page.context().close()

    const dir = mkdtempSync(join(tmpdir(), 'charts-duckdb-'))
    try {
      const file = join(dir, 'tickets.duckdb')
      const sync = Bun.spawn(['npm', 'run', '-s', 'sync', '--', '--url', setup.server.base, '--into', file, '--since', '2026-03-01'], {
        env: { ...process.env, API_TOKEN: token },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      expect(await sync.exited).toBe(0)
      const queries = docsQueries()
      expect(Object.keys(queries)).toEqual(['Tickets per day', 'Wait by queue', 'Arrivals by hour', 'Outcome by queue'])

      const perDay = new Map<string, number>()
      for (const row of await queryDuckDb(file, queries['Tickets per day']!)) perDay.set(`${row.day} ${row.status}`, Number(row.tickets))
      const statuses = ['WAITING', 'CALLED', 'COMPLETED', 'CANCELED', 'SKIPPED', 'NO_SHOW']
      expect(tables['Tickets per day']!.map((row) => row.slice(0, 7))).toEqual(
        tables['Tickets per day']!.map(([day]) => [day!, ...statuses.map((status) => String(perDay.get(`${day} ${status}`) ?? 0))]),
      )
      expect(tables['Tickets per day']).toHaveLength(29)
      expect(perDay.size).toBeGreaterThan(29 * 3) // the data fill the days

      // One row per queue of a location: [location, queue, …], as the page's tables.
      const waits = await queryDuckDb(file, queries['Wait by queue']!)
      expect(tables['Wait by queue']!.map(([location, queue, called, median, p90]) => [location, queue, Number(called), Number(median), Number(p90)])).toEqual(
        waits
          .map((row) => [String(row.location), String(row.queue), Number(row.called), Number(row.median_min), Number(row.p90_min)])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1]))),
      )

      const arrivals = new Map<string, number>()
      for (const row of await queryDuckDb(file, queries['Arrivals by hour']!)) arrivals.set(`${row.weekday} ${row.hour}`, Number(row.tickets))
      expect(tables['Arrivals by hour']).toEqual(
        Array.from({ length: 24 }, (_, hour) => {
          const counts = WEEKDAYS.map((_, i) => arrivals.get(`${i + 1} ${hour}`) ?? 0)
          return [String(hour), ...counts.map(String), String(counts.reduce((a, b) => a + b, 0))]
        }),
      )

      const outcomes = new Map<string, { share: number; ended: number }>()
      for (const row of await queryDuckDb(file, queries['Outcome by queue']!)) outcomes.set(`${row.location} ${row.queue} ${row.status}`, { share: Number(row.share), ended: Number(row.ended) })
      expect(tables['Outcome by queue']!.length).toBeGreaterThan(0)
      for (const [location, queue, ...cells] of tables['Outcome by queue']!) {
        const shares = ['COMPLETED', 'NO_SHOW', 'CANCELED', 'SKIPPED'].map((status) => outcomes.get(`${location} ${queue} ${status}`)?.share ?? 0)
        expect([location, queue, ...cells.slice(0, 4).map(Number), Number(cells[4])]).toEqual([location, queue, ...shares, outcomes.get(`${location} ${queue} COMPLETED`)!.ended])
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
