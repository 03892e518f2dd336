import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32 } from '../../src/web/xlsx/zip.ts'
import { EXCEL_MAX_ROWS, SheetXml, excelSerial, rowsOf, workbookStream } from '../../src/web/xlsx/workbook.ts'

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
