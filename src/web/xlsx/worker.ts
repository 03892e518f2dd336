// The .xlsx worker: turns the file with names and local times (CSV bytes, as they stream, with no
// formula guard: an .xlsx cell is text or a number, never a formula) into a workbook stream,
// off the page's thread. The page transfers the CSV stream in and the workbook stream back.
// Each record's fields go from the CSV's bytes to the sheet's XML bytes (workbook.ts SheetXml):
// no string is made per cell, which was most of the time when every field was decoded.

import { CsvRecords } from '../charts/csv-rows.ts'
import { EXCEL_MAX_ROWS, SheetXml, workbookParts, type CellType } from './workbook.ts'
import { zipStream } from './zip.ts'

const scope = globalThis as unknown as { postMessage(message: unknown, transfer?: Transferable[]): void; onmessage: ((event: MessageEvent<{ csv: ReadableStream<Uint8Array>; sheet: string; maxRows: number }>) => void) | null }

/** A column's type by its name: the ticket's number a number, the …Local times dates, the rest text (ids and UTC instants kept exact). */
export function columnType(name: string): CellType {
  if (name === 'number') return 'number'
  return name.endsWith('Local') ? 'datetime' : 'text'
}

/** The sheet's XML of a CSV stream (its first record the header), about `chunkBytes` at a time as it is read. */
export function csvSheet(csv: ReadableStream<Uint8Array>, maxRows = EXCEL_MAX_ROWS, chunkBytes = 1 << 16): ReadableStream<Uint8Array> {
  const reader = csv.getReader()
  let xml: SheetXml | null = null
  const records = new CsvRecords((record) => {
    if (xml) return xml.row(record)
    const header = Array.from({ length: record.length }, (_, i) => record.field(i)).map((name, i) => (i === 0 ? name.replace(/^\uFEFF/, '') : name))
    xml = new SheetXml(header.map(columnType), maxRows)
    xml.start(header)
  })
  return new ReadableStream({
    async pull(controller) {
      for (;;) {
        const sheet = xml as SheetXml | null
        if (sheet && sheet.size >= chunkBytes) return controller.enqueue(sheet.take())
        const { done, value } = await reader.read()
        if (!done) {
          records.push(value)
          continue
        }
        records.end()
        const last = (xml as SheetXml | null) ?? new SheetXml([])
        if (!xml) last.start([])
        last.end()
        controller.enqueue(last.take())
        controller.close()
        return
      }
    },
    async cancel(reason) {
      await reader.cancel(reason)
    },
  })
}

scope.onmessage = (event) => {
  const workbook = zipStream(workbookParts(event.data.sheet, csvSheet(event.data.csv, event.data.maxRows)))
  scope.postMessage({ workbook }, [workbook as unknown as Transferable])
}
