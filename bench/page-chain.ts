// The page's figures for a chain (docs/performance.md#latest-results, rows ‡): 30 locations in
// 12 zones, 133 queues, ticketsADay tickets a day for 30 days (50,000, the volume, takes
// about 80 s on a shared 2-core box, the bench's process under 250 MB).
//   node_modules/.bin/bun bench/page-chain.ts [ticketsADay=50000] [xlsxRows=500000] [pairs=5]
// 1. click on Charts to the last chart drawn, in each location's own time against one zone;
// 2. the .xlsx of xlsxRows rows against the names CSV: click to saved, and the tab's peak JS heap
//    (page and workers, with ArrayBuffers), both saved to a file that discards what it is given.

import { chromium, type Page } from 'playwright-core'
import { startServer } from '../test/support/harness.ts'
import { openTenant } from '../test/support/harness.ts'
import { discardingSaveDialog, heapSampler } from './scenarios/charts.ts'

const [perDay = 50_000, xlsxRows = 500_000, pairs = 5] = process.argv.slice(2).map(Number)
const ZONES = ['America/New_York', 'Asia/Kolkata', 'Europe/Moscow', 'Europe/Zurich', 'America/Los_Angeles', 'Australia/Sydney', 'Asia/Tokyo', 'America/Sao_Paulo', 'Africa/Johannesburg', 'Pacific/Auckland', 'America/Chicago', 'Europe/London']
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** An organisation of 30 locations and 133 queues with `count` tickets from `start`, one every `every` seconds, queues in turn. */
function chain(server: Awaited<ReturnType<typeof startServer>>, count: number, every: number): string {
  const { org, token } = server.seeded({ tickets: [] })
  const db = openTenant(server.dataDir, org.id)
  for (let l = 0; l < 30; l++) db.run('INSERT INTO locations (id, name, slug, time_zone) VALUES (?, ?, ?, ?)', [`l${l}`, `Location ${l} of the chain`, `l${l}`, ZONES[l % ZONES.length]!])
  for (let q = 0; q < 133; q++) db.run("INSERT INTO queues (id, location_id, name, slug, status) VALUES (?, ?, ?, ?, 'ACTIVE')", [`q${q}`, `l${q % 30}`, `Queue ${q}`, `q${q}`])
  db.run(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
     INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, called_at, completed_at)
     SELECT printf('c%07d', i), i, 'q' || (i % 133), 'l' || ((i % 133) % 30), 'COMPLETED',
       strftime('%Y-%m-%dT%H:%M:%fZ', '2026-03-01', '+' || (i * ?2) || ' seconds'),
       strftime('%Y-%m-%dT%H:%M:%fZ', '2026-03-01', '+' || (i * ?2 + 30 + i % 900) || ' seconds'),
       strftime('%Y-%m-%dT%H:%M:%fZ', '2026-03-01', '+' || (i * ?2 + 400 + i % 900) || ' seconds')
     FROM n`,
    [count, every],
  )
  db.close()
  return token
}

async function open(base: string, token: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, timezoneId: 'Europe/Amsterdam' })
  await context.addInitScript(discardingSaveDialog)
  const page = await context.newPage()
  await page.goto(base)
  await page.getByLabel(/Paste an API token/).fill(token)
  await page.getByRole('button', { name: 'Use token' }).click()
  await page.getByText(/^All \d+ locations/).waitFor()
  await page.getByLabel('From', { exact: true }).fill('2026-03-02')
  await page.getByLabel('To (included)', { exact: true }).fill('2026-03-31')
  return page
}

/** Seconds from the click to `done` appearing in the progress line. */
async function timed(page: Page, button: string, done: RegExp): Promise<number> {
  const started = performance.now()
  await page.getByRole('button', { name: button, exact: true }).click()
  await page.locator('#progress').filter({ hasText: done }).waitFor({ timeout: 900_000 })
  return (performance.now() - started) / 1000
}

const server = await startServer({})
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] })
try {
  // 1. Charts: 30 days of the chain, one zone against each location's own.
  const chartsToken = chain(server, perDay * 31, Math.floor(86_400 / perDay))
  const page = await open(server.base, chartsToken)
  const times = { single: [] as number[], own: [] as number[] }
  for (let i = 0; i < pairs; i++) {
    for (const mode of ['single', 'own'] as const) {
      await page.getByLabel(mode === 'own' ? "In each location's own" : 'In the zone above').check()
      times[mode].push(await timed(page, 'Charts', /^Charts drawn from/))
    }
  }
  const tickets = await page.locator('#progress').textContent()
  console.log(`charts, 30 days of ${perDay}/day (${tickets}): single zone ${median(times.single).toFixed(2)} s, each location's own ${median(times.own).toFixed(2)} s, ratio ${(median(times.own) / median(times.single)).toFixed(2)}× (medians of ${pairs}: ${times.single.map((t) => t.toFixed(2))} / ${times.own.map((t) => t.toFixed(2))})`)
  await page.context().close()

  // 2. The .xlsx of xlsxRows rows against the names CSV.
  const fileToken = chain(server, xlsxRows, Math.floor((30 * 86_400) / xlsxRows))
  const filePage = await open(server.base, fileToken)
  const heap = await heapSampler(filePage)
  // The first .xlsx counts its rows first (no charts of the selection); the second has that count.
  for (const [kind, label] of [['csv', 'csv'], ['xlsx', 'xlsx, counted first'], ['xlsx', 'xlsx, count known']] as const) {
    await filePage.getByLabel('Add names and local times').setChecked(kind === 'csv')
    await filePage.getByLabel('As an Excel workbook (.xlsx)').setChecked(kind === 'xlsx')
    heap.reset()
    const seconds = await timed(filePage, 'Download CSV', /^Saved /)
    const peak = heap.peak()
    console.log(`${label} of ${xlsxRows} rows: ${seconds.toFixed(2)} s, peak JS heap of the tab ${(peak.heap / 1e6).toFixed(1)} MB (${(peak.withBuffers / 1e6).toFixed(1)} MB with ArrayBuffers); ${await filePage.locator('#progress').textContent()}`)
  }
  await heap.stop()
} finally {
  await browser.close()
  await server.close()
}
