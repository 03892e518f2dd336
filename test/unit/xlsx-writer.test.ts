import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32 } from '../../src/web/xlsx/zip.ts'
import { EXCEL_MAX_ROWS, SheetXml, columnWidth, excelSerial, rowsOf, workbookStream } from '../../src/web/xlsx/workbook.ts'

describe('the .xlsx writer', () => {
  test('CRC-32 is the zip one (check value of "123456789")', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926)
    // Continued over two pieces, the same.
    expect(crc32(new TextEncoder().encode('6789'), crc32(new TextEncoder().encode('12345')))).toBe(0xcbf43926)
  })

  test('a local time is its wall-clock serial day number; anything else is no date', () => {
    expect(excelSerial('1900-03-01')).toBe(61)
    expect(excelSerial('2026-03-02 12:00:00')).toBe(46083.5)
    expect(excelSerial('2026-03-02T12:00:00Z')).toBeNull()
    expect(excelSerial('=Downtown')).toBeNull()
  })

  test('a workbook is a zip whose sheet holds text as inline strings, numbers and dates typed', async () => {
    const bytes = new Uint8Array(await new Response(workbookStream('T', ['name', 'n', 'at'], ['text', 'number', 'datetime'], rowsOf([['=Down<town>', '7', '2026-03-02 12:00:00']]))).arrayBuffer())
    // Local file header first, end of central directory last, six entries.
    expect([...bytes.subarray(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04])
    const end = new DataView(bytes.buffer, bytes.length - 22)
    expect(end.getUint32(0, true)).toBe(0x06054b50)
    expect(end.getUint16(10, true)).toBe(6)
    // The sheet, deflated: inflate it from its local header (after the five stored parts).
    const text = new TextDecoder('latin1').decode(bytes) // one character per byte: indices are offsets
    const descriptor = text.lastIndexOf('PK\u0007\u0008')
    const header = text.lastIndexOf('PK\u0003\u0004', descriptor)
    expect(text.slice(header + 30, header + 30 + 24)).toBe('xl/worksheets/sheet1.xml')
    const at = header + 30 + 24
    const sheet = Bun.inflateSync(bytes.subarray(at, descriptor))
    const xml = new TextDecoder().decode(sheet)
    expect(xml).toContain('<c t="inlineStr"><is><t xml:space="preserve">=Down&lt;town&gt;</t></is></c><c><v>7</v></c><c s="1"><v>46083.5</v></c>')
    expect(xml).not.toContain('<f>')
    // The data descriptor: the CRC-32 and sizes of the sheet (taken from the gzip trailer).
    const sizes = new DataView(bytes.buffer, descriptor)
    expect([sizes.getUint32(4, true), sizes.getUint32(8, true), sizes.getUint32(12, true)]).toEqual([crc32(sheet), descriptor - at, sheet.length])
  })

  test('columns wide enough for a local time, an ISO time and the header, set before the rows', () => {
    const xml = new SheetXml(['text', 'number', 'datetime', 'date'])
    xml.start(['createdAt', 'number', 'createdAtLocal', 'day'])
    const sheet = new TextDecoder().decode(xml.take())
    // LibreOffice opened the names file's .xlsx with its local times as "###" while no width was set.
    expect(sheet).toContain('</sheetViews><cols><col min="1" max="1" width="26" customWidth="1"/><col min="2" max="2" width="10" customWidth="1"/><col min="3" max="3" width="20" customWidth="1"/><col min="4" max="4" width="12" customWidth="1"/></cols><sheetData>')
    expect(columnWidth('2026-03-02 12:00:00', 'text')).toBe(26)
    expect(columnWidth('a header longer than any of the least widths', 'number')).toBe(46)
    expect(columnWidth('x'.repeat(200), 'text')).toBe(60)
  })

  test('cells from their bytes: markup escaped, controls dropped, _xHHHH_ escaped, numbers and dates only when whole', async () => {
    const bytes = new Uint8Array(await new Response(workbookStream('T', ['t', 'n', 'd'], ['text', 'number', 'datetime'], rowsOf([
      ['a&b<c>"d" Zürich', '-1.5', '2026-03-02 12:00:00'],
      ['x\u0001y\uFFFF', '1.', '2026-03-02T12:00:00Z'],
      ['q_x4_39', '', '2026-03-02'],
      ['_x1\u0001_'],
    ]))).arrayBuffer())
    const text = new TextDecoder('latin1').decode(bytes)
    const descriptor = text.lastIndexOf('PK\u0007\u0008')
    const at = text.lastIndexOf('PK\u0003\u0004', descriptor) + 30 + 24
    const xml = new TextDecoder().decode(Bun.inflateSync(bytes.subarray(at, descriptor)))
    const t = (value: string) => `<c t="inlineStr"><is><t xml:space="preserve">${value}</t></is></c>`
    expect(xml).toContain(`<row>${t('a&amp;b&lt;c&gt;&quot;d&quot; Zürich')}<c><v>-1.5</v></c><c s="1"><v>46083.5</v></c></row>`)
    expect(xml).toContain(`<row>${t('xy')}${t('1.')}${t('2026-03-02T12:00:00Z')}</row>`)
    expect(xml).toContain(`<row>${t('q_x005F_x4_39')}<c/><c s="1"><v>46083</v></c></row>`)
    // A control character dropped makes an escape of what is left: escaped too (the slower path).
    expect(xml).toContain(`<row>${t('_x005F_x1_')}</row>`)
  })

  test('a sheet of many chunks: the deflated bytes inflate to the sheet and the descriptor holds its CRC-32 and sizes', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => [`t${i}`, String(i), `2026-03-02 12:${String(i % 60).padStart(2, '0')}:00`])
    const bytes = new Uint8Array(await new Response(workbookStream('T', ['id', 'n', 'at'], ['text', 'number', 'datetime'], rowsOf(rows))).arrayBuffer())
    const text = new TextDecoder('latin1').decode(bytes)
    const descriptor = text.lastIndexOf('PK\u0007\u0008')
    const at = text.lastIndexOf('PK\u0003\u0004', descriptor) + 30 + 24
    const sheet = Bun.inflateSync(bytes.subarray(at, descriptor))
    expect(new TextDecoder().decode(sheet)).toContain('<row><c t="inlineStr"><is><t xml:space="preserve">t19999</t></is></c><c><v>19999</v></c><c s="1"><v>')
    const sizes = new DataView(bytes.buffer, descriptor)
    expect([sizes.getUint32(4, true), sizes.getUint32(8, true), sizes.getUint32(12, true)]).toEqual([crc32(sheet), descriptor - at, sheet.length])
  })

  // A literal "_x" + hex + "_" in a string is an escape to Excel and LibreOffice (ST_Xstring):
  // written as is, "q_x4_39" read back as "q\u000439". The writer escapes its "_" as "_x005F_".
  test.skipIf(!existsSync('/usr/bin/soffice'))('text like an _xHHHH_ escape reads back as written in LibreOffice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xlsx-escape-'))
    try {
      const texts = ['q_x4_39', 'a_x0041_b', '_x005F_', 'plain_x_y']
      const bytes = new Uint8Array(await new Response(workbookStream('T', ['name'], ['text'], rowsOf(texts.map((t) => [t])))).arrayBuffer())
      writeFileSync(join(dir, 'escape.xlsx'), bytes)
      const run = Bun.spawnSync(['/usr/bin/soffice', `-env:UserInstallation=file://${dir}/profile`, '--headless', '--convert-to', 'csv', '--outdir', join(dir, 'out'), join(dir, 'escape.xlsx')], { stdout: 'pipe', stderr: 'pipe' })
      expect(run.exitCode).toBe(0)
      expect(readFileSync(join(dir, 'out', 'escape.csv'), 'utf8').trim().split('\n')).toEqual(['name', ...texts])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe("the sheet's row limit", () => {
  test("Excel's own by default: 1,048,575 rows under the header, the next one refused", () => {
    const xml = new SheetXml(['number'])
    xml.start(['n'])
    const cells = { length: 1, bytesOf: () => new Uint8Array([0x37]) }
    for (let i = 1; i < EXCEL_MAX_ROWS; i++) {
      xml.row(cells)
      if (xml.size > 1 << 20) xml.take()
    }
    expect(EXCEL_MAX_ROWS).toBe(1_048_576)
    expect(() => xml.row(cells)).toThrow("more than 1,048,575 rows, Excel's limit for one sheet")
  })
})
