// An .xlsx workbook of one sheet, written as a stream from rows as they come: text cells are
// inline strings (never a formula, and no apostrophe shows), numbers are numbers, and local
// times `YYYY-MM-DD HH:MM:SS` (and days `YYYY-MM-DD`) are real dates, formatted as written.
// The sheet's XML is made a chunk at a time as the reader asks, so memory stays one chunk deep.

import { zipStream, type ZipPart } from './zip.ts'

export type CellType = 'text' | 'number' | 'datetime' | 'date'

/** Excel's rows per sheet (the header row included). */
export const EXCEL_MAX_ROWS = 1_048_576

/** More rows than a sheet holds: the CSV has them all. */
export class TooManyRows extends Error {
  constructor(maxRows = EXCEL_MAX_ROWS) {
    super(`more than ${(maxRows - 1).toLocaleString('en-US')} rows, Excel's limit for one sheet`)
    this.name = 'TooManyRows'
  }
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships'
const DOC_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'

const STATIC_PARTS = {
  '[Content_Types].xml': `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
  '_rels/.rels': `${XML}<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  'xl/_rels/workbook.xml.rels': `${XML}<Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${DOC_RELS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${DOC_RELS}/styles" Target="styles.xml"/></Relationships>`,
  // Style 1: a date and time as the page writes it; style 2: a day; style 3: the header row, bold.
  'xl/styles.xml': `${XML}<styleSheet xmlns="${MAIN}"><numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd hh:mm:ss"/><numFmt numFmtId="165" formatCode="yyyy\\-mm\\-dd"/></numFmts><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs></styleSheet>`,
}

function workbookXml(sheetName: string): string {
  return `${XML}<workbook xmlns="${MAIN}" xmlns:r="${DOC_RELS}"><sheets><sheet name="${escape(sheetName.slice(0, 31).replace(/[\\/?*[\]:]/g, '-'))}" sheetId="1" r:id="rId1"/></sheets></workbook>`
}

/** Text as XML character data: markup escaped, and the control characters XML 1.0 cannot hold dropped. */
function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\uFFFE\uFFFF]/g, '')
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?$/

/** A local date and time as Excel's serial day number (days since 1899-12-30; no zone, as the wall clock reads). */
export function excelSerial(value: string): number | null {
  const parts = DATETIME.exec(value)
  if (!parts) return null
  const [, y, mo, d, h = '0', mi = '0', s = '0'] = parts
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) / 86_400_000 + 25_569
}

/**
 * Cell text: Excel and LibreOffice read "_x" + hex digits + "_" in a string as an escaped character
 * (OOXML ST_Xstring; LibreOffice takes any number of digits), so a literal one has its "_" escaped as "_x005F_".
 */
function text(value: string): string {
  return escape(value).replace(/_(?=x[0-9A-Fa-f]+_)/g, '_x005F_')
}

/** A row's cells as UTF-8 bytes: a CSV record's own, in place (charts/csv-rows.ts), or strings encoded. */
export interface Cells {
  readonly length: number
  bytesOf(i: number): Uint8Array
}

const encoder = new TextEncoder()
const ROW = encoder.encode('<row>')
const ROW_END = encoder.encode('</row>')
const EMPTY = encoder.encode('<c/>')
const TEXT = encoder.encode('<c t="inlineStr"><is><t xml:space="preserve">')
const TEXT_END = encoder.encode('</t></is></c>')
const NUMBER_CELL = encoder.encode('<c><v>')
const DATETIME_CELL = encoder.encode('<c s="1"><v>')
const DATE_CELL = encoder.encode('<c s="2"><v>')
const VALUE_END = encoder.encode('</v></c>')
const ESCAPES: (Uint8Array | undefined)[] = []
ESCAPES[0x26] = encoder.encode('&amp;')
ESCAPES[0x3c] = encoder.encode('&lt;')
ESCAPES[0x3e] = encoder.encode('&gt;')
ESCAPES[0x22] = encoder.encode('&quot;')
/** Bytes of text that are not copied as they are: the four escaped, and "_" (maybe "_x005F_"). */
const SPECIAL = new Uint8Array(256)
for (const b of [0x26, 0x3c, 0x3e, 0x22, 0x5f]) SPECIAL[b] = 1
const DIGIT = (b: number) => b >= 0x30 && b <= 0x39

/** /^-?\d+(\.\d+)?$/ on bytes. */
function isNumber(bytes: Uint8Array): boolean {
  let i = bytes[0] === 0x2d ? 1 : 0
  const start = i
  while (i < bytes.length && DIGIT(bytes[i]!)) i++
  if (i === start) return false
  if (i === bytes.length) return true
  if (bytes[i++] !== 0x2e || i === bytes.length) return false
  while (i < bytes.length && DIGIT(bytes[i]!)) i++
  return i === bytes.length
}

/** excelSerial on bytes, without a string: `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS`, else null. */
function serialOf(b: Uint8Array): number | null {
  if (b.length !== 10 && b.length !== 19) return null
  const n = (at: number, digits: number) => {
    let value = 0
    for (let i = at; i < at + digits; i++) {
      if (!DIGIT(b[i]!)) return NaN
      value = value * 10 + b[i]! - 0x30
    }
    return value
  }
  if (b[4] !== 0x2d || b[7] !== 0x2d) return null
  const day = [n(0, 4), n(5, 2), n(8, 2)]
  const time = b.length === 19 && b[10] === 0x20 && b[13] === 0x3a && b[16] === 0x3a ? [n(11, 2), n(14, 2), n(17, 2)] : b.length === 10 ? [0, 0, 0] : null
  if (!time || [...day, ...time].some(Number.isNaN)) return null
  return Date.UTC(day[0]!, day[1]! - 1, day[2]!, time[0]!, time[1]!, time[2]!) / 86_400_000 + 25_569
}

/** Bytes that text() drops or may rewrite with a look-ahead past them: a C0 control other than tab, LF, CR, or a UTF-8 U+FFFE/U+FFFF. */
function needsSlowText(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!
    if (b < 0x20 ? b !== 0x09 && b !== 0x0a && b !== 0x0d : b === 0xef && bytes[i + 1] === 0xbf && (bytes[i + 2] === 0xbe || bytes[i + 2] === 0xbf)) return true
  }
  return false
}

/** "_x" + hex digits + "_" starts at bytes[i] (see text()). */
function isXEscape(bytes: Uint8Array, i: number): boolean {
  if (bytes[i + 1] !== 0x78) return false
  let j = i + 2
  while (j < bytes.length && /[0-9A-Fa-f]/.test(String.fromCharCode(bytes[j]!))) j++
  return j > i + 2 && bytes[j] === 0x5f
}

const LEAST_WIDTH: Record<CellType, number> = { datetime: 20, date: 12, number: 10, text: 26 }

/**
 * A column's width, in characters, set before its rows are known (the sheet is streamed): a
 * local time whole (a spreadsheet shows "###" for a date that does not fit), an ISO time or
 * most names whole, the header whole.
 */
export function columnWidth(name: string, type: CellType): number {
  return Math.min(60, Math.max(LEAST_WIDTH[type], name.length + 2))
}

/**
 * The sheet's XML written as bytes into one reused buffer, cell by cell from the cells' own bytes
 * (no string per cell: a CSV field is copied with its markup escaped, a number as it is, a local
 * time as its serial). `take()` hands the bytes so far over; the buffer starts again.
 */
export class SheetXml {
  private buffer = new Uint8Array(1 << 17)
  private at = 0
  private rows = 0

  /** `maxRows`: the sheet's rows, header included (Excel's own unless lowered, as a test does). */
  constructor(private readonly types: readonly CellType[], private readonly maxRows = EXCEL_MAX_ROWS) {}

  /** Bytes written since the last take(). */
  get size(): number {
    return this.at
  }

  start(header: readonly string[]): void {
    const cols = header.map((name, i) => `<col min="${i + 1}" max="${i + 1}" width="${columnWidth(name, this.types[i] ?? 'text')}" customWidth="1"/>`).join('')
    this.raw(encoder.encode(`${XML}<worksheet xmlns="${MAIN}"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><cols>${cols}</cols><sheetData><row>${header.map((name) => `<c t="inlineStr" s="3"><is><t>${text(name)}</t></is></c>`).join('')}</row>`))
    this.rows = 1
  }

  row(cells: Cells): void {
    if (++this.rows > this.maxRows) throw new TooManyRows(this.maxRows)
    this.raw(ROW)
    for (let i = 0; i < cells.length; i++) this.cell(cells.bytesOf(i), this.types[i] ?? 'text')
    this.raw(ROW_END)
  }

  end(): void {
    this.raw(encoder.encode('</sheetData></worksheet>'))
  }

  take(): Uint8Array {
    const bytes = this.buffer.subarray(0, this.at)
    this.buffer = new Uint8Array(this.buffer.length)
    this.at = 0
    return bytes
  }

  private room(length: number): void {
    if (this.at + length <= this.buffer.length) return
    const bigger = new Uint8Array(Math.max(this.buffer.length * 2, this.at + length))
    bigger.set(this.buffer.subarray(0, this.at))
    this.buffer = bigger
  }

  private raw(bytes: Uint8Array): void {
    this.room(bytes.length)
    this.buffer.set(bytes, this.at)
    this.at += bytes.length
  }

  private cell(bytes: Uint8Array, type: CellType): void {
    if (bytes.length === 0) return this.raw(EMPTY)
    if (type === 'number' && isNumber(bytes)) {
      this.raw(NUMBER_CELL)
      this.raw(bytes)
      return this.raw(VALUE_END)
    }
    if (type === 'datetime' || type === 'date') {
      const serial = serialOf(bytes)
      if (serial !== null) {
        this.raw(type === 'datetime' ? DATETIME_CELL : DATE_CELL)
        const digits = String(serial)
        this.room(digits.length)
        for (let i = 0; i < digits.length; i++) this.buffer[this.at++] = digits.charCodeAt(i)
        return this.raw(VALUE_END)
      }
    }
    this.raw(TEXT)
    if (needsSlowText(bytes)) this.raw(encoder.encode(text(new TextDecoder().decode(bytes))))
    else {
      this.room(bytes.length * 7) // at most "_x005F_" for one byte
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i]!
        const escaped = SPECIAL[b] ? (b === 0x5f ? (isXEscape(bytes, i) ? X_ESCAPE : undefined) : ESCAPES[b]) : undefined
        if (escaped) {
          this.buffer.set(escaped, this.at)
          this.at += escaped.length
        } else this.buffer[this.at++] = b
      }
    }
    this.raw(TEXT_END)
  }
}
const X_ESCAPE = encoder.encode('_x005F_')

/** Cells of a row of strings. */
class StringCells implements Cells {
  constructor(private readonly values: readonly string[]) {}
  get length(): number {
    return this.values.length
  }
  bytesOf(i: number): Uint8Array {
    return encoder.encode(this.values[i] ?? '')
  }
}

/** The sheet's XML for a header and rows of strings, made about `chunkBytes` at a time as it is read. */
export function sheetStream(header: readonly string[], types: readonly CellType[], rows: AsyncIterator<string[]>, chunkBytes = 1 << 16): ReadableStream<Uint8Array> {
  const xml = new SheetXml(types)
  xml.start(header)
  return new ReadableStream({
    async pull(controller) {
      while (xml.size < chunkBytes) {
        const next = await rows.next()
        if (next.done) {
          xml.end()
          controller.enqueue(xml.take())
          controller.close()
          return
        }
        xml.row(new StringCells(next.value))
      }
      controller.enqueue(xml.take())
    },
    async cancel() {
      await rows.return?.()
    },
  })
}

/** The parts of the .xlsx of one sheet named `sheetName` whose XML is `sheet` (a SheetXml's bytes), the sheet last. */
export function workbookParts(sheetName: string, sheet: ReadableStream<Uint8Array>): ZipPart[] {
  return [
    { name: '[Content_Types].xml', bytes: encoder.encode(STATIC_PARTS['[Content_Types].xml']) },
    { name: '_rels/.rels', bytes: encoder.encode(STATIC_PARTS['_rels/.rels']) },
    { name: 'xl/workbook.xml', bytes: encoder.encode(workbookXml(sheetName)) },
    { name: 'xl/_rels/workbook.xml.rels', bytes: encoder.encode(STATIC_PARTS['xl/_rels/workbook.xml.rels']) },
    { name: 'xl/styles.xml', bytes: encoder.encode(STATIC_PARTS['xl/styles.xml']) },
    { name: 'xl/worksheets/sheet1.xml', stream: sheet },
  ]
}

/** The .xlsx of one sheet named `sheetName`: `header`, then `rows`, typed by column. */
export function workbookStream(sheetName: string, header: readonly string[], types: readonly CellType[], rows: AsyncIterator<string[]>): ReadableStream<Uint8Array> {
  return zipStream(workbookParts(sheetName, sheetStream(header, types, rows)))
}

/** Rows of a small table, for workbookStream. */
export async function* rowsOf(rows: readonly string[][]): AsyncGenerator<string[]> {
  yield* rows
}
