import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openTenant } from '../support/harness.ts'
import { writeTickets } from '../support/fixtures.ts'
import { browserSetup, chromiumAvailable, openPage, seriousViolations, setRange, useToken } from './support.ts'

/**
 * The .xlsx beside the CSV, opened by LibreOffice (headless, as `soffice --convert-to` runs it:
 * no import dialog): text stays text with no apostrophe (a queue named "=Downtown" too), local
 * times are dates, the ticket's number a number; the CSVs as LibreOffice reads them unasked.
 */

const SOFFICE = '/usr/bin/soffice'
const SIZES = { laptop: { width: 1366, height: 768 }, phone: { width: 390, height: 844 } } as const

/** Cells of the first sheet of a file as LibreOffice reads it, each with its value type (string, float, date). */
function readByLibreOffice(file: string, dir: string, infilter?: string): { text: string; type: string; value?: string }[][] {
  const run = Bun.spawnSync([SOFFICE, `-env:UserInstallation=file://${dir}/profile`, '--headless', ...(infilter ? [`--infilter=${infilter}`] : []), '--convert-to', 'fods', '--outdir', join(dir, 'out'), file], { stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`soffice failed: ${run.stderr.toString()}`)
  const xml = readFileSync(join(dir, 'out', file.split('/').at(-1)!.replace(/\.\w+$/, '.fods')), 'utf8')
  const rows = [...xml.matchAll(/<table:table-row[^>]*>(.*?)<\/table:table-row>/gs)].map(([, row]) =>
    [...row!.matchAll(/<table:table-cell([^>]*?)(?:\/>|>(.*?)<\/table:table-cell>)/gs)].flatMap(([, attributes, body]) => {
      const cell = {
        text: (body ?? '').replace(/<[^>]+>/g, '').trim().replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&apos;', "'").replaceAll('&quot;', '"'),
        type: /office:value-type="(\w+)"/.exec(attributes!)?.[1] ?? '',
        value: /office:(?:date-)?value="([^"]+)"/.exec(attributes!)?.[1],
      }
      // Empty cells in a row are written once with a count.
      return Array.from({ length: Math.min(64, Number(/table:number-columns-repeated="(\d+)"/.exec(attributes!)?.[1] ?? 1)) }, () => cell)
    }),
  )
  return rows.filter((row) => row.some((cell) => cell.text !== ''))
}

describe.skipIf(!chromiumAvailable || !existsSync(SOFFICE))('the .xlsx, and the files in LibreOffice', () => {
  const setup = browserSetup({ server: {} })

  for (const [size, viewport] of Object.entries(SIZES)) {
    test(`${size}: text as text, local times as dates, numbers as numbers; the CSV read unasked is Latin-1`, async () => {
      const { org, token } = setup.server.seeded()
      const db = openTenant(setup.server.dataDir, org.id)
      db.run("INSERT INTO locations (id, name, slug) VALUES ('loc_eq', '=Downtown', 'downtown')")
      db.run("INSERT INTO queues (id, location_id, name, slug, status) VALUES ('q_eq', 'loc_eq', '-Walk-ins', 'walk-ins', 'ACTIVE')")
      writeTickets(db, [{ id: 't-eq', number: 7, queueId: 'q_eq', locationId: 'loc_eq', status: 'COMPLETED', createdAt: '2026-03-02T11:00:00.000Z', calledAt: '2026-03-02T11:04:30.000Z', completedAt: '2026-03-02T11:10:00.000Z' }])
      db.close()
      const dir = mkdtempSync(join(tmpdir(), 'xlsx-'))
      try {
        const { page } = await openPage(setup.browser, setup.server.base, { viewport, timezoneId: 'Europe/Zurich' })
        await useToken(page, token)
        await page.getByRole('checkbox', { name: 'Payments' }).waitFor()
        await setRange(page, '2026-03-02', '2026-03-03')
        expect(await page.locator('#download').textContent()).toBe('Download CSV')
        await page.getByLabel('As an Excel workbook (.xlsx)').check()
        expect(await seriousViolations(page)).toEqual([])
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download .xlsx' }).click()])
        expect(download.suggestedFilename()).toMatch(/^tickets_.*_names_Europe-Zurich\.xlsx$/)
        await page.getByText(/^Downloaded .*\.xlsx: 7 rows/).waitFor()
        const workbook = join(dir, 'tickets.xlsx')
        await download.saveAs(workbook)
        const sheet = readByLibreOffice(workbook, dir)
        const header = sheet[0]!.map((cell) => cell.text)
        const row = sheet.find((cells) => cells[header.indexOf('id')]?.text === 't-eq')!
        const cell = (name: string) => row[header.indexOf(name)]!
        // Text as text, as named: no apostrophe, no formula.
        expect(cell('locationName')).toMatchObject({ text: '=Downtown', type: 'string' })
        expect(cell('queueName')).toMatchObject({ text: '-Walk-ins', type: 'string' })
        // A local time is a date (12:00 in Zürich), the number a number, the UTC instant exact text.
        expect(cell('createdAtLocal')).toMatchObject({ text: '2026-03-02 12:00:00', type: 'date', value: '2026-03-02T12:00:00' })
        expect(cell('calledAtLocal')).toMatchObject({ type: 'date', value: '2026-03-02T12:04:30' })
        expect(cell('number')).toMatchObject({ text: '7', type: 'float' })
        expect(cell('createdAt')).toMatchObject({ text: '2026-03-02T11:00:00.000Z', type: 'string' })
        expect(sheet.find((cells) => cells[header.indexOf('queueName')]?.text === 'Schalter 1 — Ämter')).toBeDefined()
        expect(sheet.find((cells) => cells[header.indexOf('queueName')]?.text === 'ID & Passports')).toBeDefined()
        expect(sheet).toHaveLength(8)

        // The names CSV, as LibreOffice 7.4 reads it without being asked (headless): Latin-1, BOM or not,
        // and the guard's apostrophe shows; told UTF-8 (filter option 76), the names are whole.
        await page.getByLabel('As an Excel workbook (.xlsx)').uncheck()
        await page.getByLabel('Add names and local times').check()
        const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
        const csv = join(dir, 'names.csv')
        await csvDownload.saveAs(csv)
        const unasked = readByLibreOffice(csv, dir)
        expect(unasked[0]![0]!.text).toBe('ï»¿id')
        expect(unasked.flat().some((c) => c.text === 'ZÃ¼rich Hauptbahnhof')).toBe(true)
        expect(unasked.flat().some((c) => c.text === "'=Downtown")).toBe(true)
        const told = readByLibreOffice(csv, dir, 'CSV:44,34,76,1')
        expect(told[0]![0]!.text).toBe('id')
        expect(told.flat().some((c) => c.text === 'Zürich Hauptbahnhof')).toBe(true)

        // A chart's numbers as an .xlsx: the day a date, the counts numbers, the names text.
        await page.getByRole('button', { name: 'Charts', exact: true }).click()
        await page.getByText(/^Charts drawn from/).waitFor()
        const [perDay] = await Promise.all([page.waitForEvent('download'), page.locator('#chart-per-day').getByRole('button', { name: 'Download these numbers (.xlsx)' }).click()])
        expect(perDay.suggestedFilename()).toBe('per-day_20260302-20260303_Europe-Zurich.xlsx')
        await perDay.saveAs(join(dir, 'per-day.xlsx'))
        const days = readByLibreOffice(join(dir, 'per-day.xlsx'), dir)
        expect(days[1]!.slice(0, 2)).toMatchObject([{ type: 'date', value: '2026-03-02' }, { type: 'float' }])
        expect(days[1]![7]).toMatchObject({ text: '4', type: 'float' }) // Total

        // The per-queue tables of service time and called-within have theirs too: names text, figures numbers.
        const service = page.locator('#chart-service')
        const [perQueue] = await Promise.all([page.waitForEvent('download'), service.getByRole('button', { name: 'Download the numbers per queue (.xlsx)' }).click()])
        expect(perQueue.suggestedFilename()).toBe('service-queue_20260302-20260303_Europe-Zurich.xlsx')
        await perQueue.saveAs(join(dir, 'service-queue.xlsx'))
        const queues = readByLibreOffice(join(dir, 'service-queue.xlsx'), dir)
        expect(queues[0]!.slice(0, 5).map((c) => c.text)).toEqual(['Location', 'Queue', 'Completed tickets', 'Median service (min)', '90th percentile (min)'])
        const walkIns = queues.find((cells) => cells[1]?.text === '-Walk-ins')!
        expect(walkIns.slice(0, 4)).toMatchObject([{ text: '=Downtown', type: 'string' }, { type: 'string' }, { text: '1', type: 'float' }, { text: '5.5', type: 'float' }])
        await expect(page.locator('#chart-target').getByRole('button', { name: 'Download the numbers per queue (.xlsx)' }).count()).resolves.toBe(1)
        await page.context().close()
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }
})
