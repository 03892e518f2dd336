// An .xlsx workbook of one sheet, written as a stream from rows as they come: text cells are
// inline strings (never a formula, and no apostrophe shows), numbers are numbers, and local
// times `YYYY-MM-DD HH:MM:SS` (and days `YYYY-MM-DD`) are real dates, formatted as written.
// The sheet's XML is made a chunk at a time as the reader asks, so memory stays one chunk deep.

import { zipStream } from './zip.ts'

export type CellType = 'text' | 'number' | 'datetime' | 'date'

/** Excel's rows per sheet (the header row included). */
export const EXCEL_MAX_ROWS = 1_048_576

/** More rows than a sheet holds: the CSV has them all. */
export class TooManyRows extends Error {
  constructor() {
    super(`more than ${EXCEL_MAX_ROWS.toLocaleString('en-US')} rows, Excel's limit for one sheet`)
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
const NUMBER = /^-?\d+(\.\d+)?$/

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

function cell(value: string, type: CellType): string {
  if (value === '') return '<c/>'
  if (type === 'number' && NUMBER.test(value)) return `<c><v>${value}</v></c>`
  if (type === 'datetime' || type === 'date') {
    const serial = excelSerial(value)
    if (serial !== null) return `<c s="${type === 'datetime' ? 1 : 2}"><v>${serial}</v></c>`
  }
  return `<c t="inlineStr"><is><t xml:space="preserve">${text(value)}</t></is></c>`
}

/** The sheet's XML for a header and rows, made about `chunkChars` at a time as it is read. */
function sheetStream(header: readonly string[], types: readonly CellType[], rows: AsyncIterator<string[]>, chunkChars = 1 << 16): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let started = false
  let count = 1
  return new ReadableStream({
    async pull(controller) {
      let xml = ''
      if (!started) {
        started = true
        xml = `${XML}<worksheet xmlns="${MAIN}"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetData><row>${header.map((name) => `<c t="inlineStr" s="3"><is><t>${text(name)}</t></is></c>`).join('')}</row>`
      }
      while (xml.length < chunkChars) {
        const next = await rows.next()
        if (next.done) {
          controller.enqueue(encoder.encode(`${xml}</sheetData></worksheet>`))
          controller.close()
          return
        }
        if (++count > EXCEL_MAX_ROWS) throw new TooManyRows()
        xml += `<row>${next.value.map((value, i) => cell(value, types[i] ?? 'text')).join('')}</row>`
      }
      controller.enqueue(encoder.encode(xml))
    },
    async cancel() {
      await rows.return?.()
    },
  })
}

/** The .xlsx of one sheet named `sheetName`: `header`, then `rows`, typed by column. */
export function workbookStream(sheetName: string, header: readonly string[], types: readonly CellType[], rows: AsyncIterator<string[]>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return zipStream([
    { name: '[Content_Types].xml', bytes: encoder.encode(STATIC_PARTS['[Content_Types].xml']) },
    { name: '_rels/.rels', bytes: encoder.encode(STATIC_PARTS['_rels/.rels']) },
    { name: 'xl/workbook.xml', bytes: encoder.encode(workbookXml(sheetName)) },
    { name: 'xl/_rels/workbook.xml.rels', bytes: encoder.encode(STATIC_PARTS['xl/_rels/workbook.xml.rels']) },
    { name: 'xl/styles.xml', bytes: encoder.encode(STATIC_PARTS['xl/styles.xml']) },
    { name: 'xl/worksheets/sheet1.xml', stream: sheetStream(header, types, rows) },
  ])
}

/** Rows of a small table, for workbookStream. */
export async function* rowsOf(rows: readonly string[][]): AsyncGenerator<string[]> {
  yield* rows
}
