// The .xlsx worker: turns the file with names and local times (CSV bytes, as they stream, with no
// formula guard: an .xlsx cell is text or a number, never a formula) into a workbook stream,
// off the page's thread. The page transfers the CSV stream in and the workbook stream back.

import { CsvRecords, type CsvRecord } from '../charts/csv-rows.ts'
import { workbookStream, type CellType } from './workbook.ts'

const scope = globalThis as unknown as { postMessage(message: unknown, transfer?: Transferable[]): void; onmessage: ((event: MessageEvent<{ csv: ReadableStream<Uint8Array>; sheet: string }>) => void) | null }

/** A column's type by its name: the ticket's number a number, the …Local times dates, the rest text (ids and UTC instants kept exact). */
export function columnType(name: string): CellType {
  if (name === 'number') return 'number'
  return name.endsWith('Local') ? 'datetime' : 'text'
}

const fieldsOf = (record: CsvRecord) => Array.from({ length: record.length }, (_, i) => record.field(i))

/** The records of a CSV stream, one chunk's worth at a time: the header first. */
export async function* csvRows(stream: ReadableStream<Uint8Array>): AsyncGenerator<string[]> {
  const reader = stream.getReader()
  const pending: string[][] = []
  const records = new CsvRecords((record) => pending.push(fieldsOf(record)))
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      records.push(value)
      yield* pending.splice(0)
    }
    records.end()
    yield* pending.splice(0)
  } finally {
    reader.releaseLock()
  }
}

scope.onmessage = async (event) => {
  const rows = csvRows(event.data.csv)
  const first = await rows.next()
  const header = first.done ? [] : first.value.map((name, i) => (i === 0 ? name.replace(/^\uFEFF/, '') : name))
  const workbook = workbookStream(event.data.sheet, header, header.map(columnType), rows)
  scope.postMessage({ workbook }, [workbook as unknown as Transferable])
}
