// The file a spreadsheet reads as it is: the export's rows and columns unchanged in value, plus
// the location's and the queue's names and, for each timestamp, its wall-clock time in the
// chosen zone as `YYYY-MM-DD HH:MM:SS` (`createdAtLocal`, …), which LibreOffice and Excel read as
// dates. Made record by record as the export streams: no more than one chunk is held. A record
// of a million is copied as its text when no field would start a formula, and its ids are looked
// up by their bytes, so that the file costs little more than the plain one.

import { ByteKeys, CsvRecords, splitQuoted, type CsvRecord } from './charts/csv-rows.ts'
import { csvCell, csvRecord, recordIsSafe } from './csv-cells.ts'
import { LocalTimestamps, type LocalClock } from './zone.ts'

export interface NamesOfPlaces {
  /** Location id → its name as the page shows it. */
  locations: ReadonlyMap<string, string>
  /** Queue id → its name. */
  queues: ReadonlyMap<string, string>
}

/** The export's timestamp columns are the ones named …At (createdAt, calledAt, …). */
const TIMESTAMP = /At$/

/** Id bytes → the name's cell, ready to write ('' for an id the page does not know). */
function nameCells(names: ReadonlyMap<string, string>): ByteKeys<string> {
  const decoder = new TextDecoder()
  return new ByteKeys((bytes) => csvCell(names.get(decoder.decode(bytes)) ?? ''))
}

/** A transform from the export's CSV bytes to the file with names and local times (every cell formula-safe). */
export function namesAndLocalTimes(names: NamesOfPlaces, clock: LocalClock): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder()
  const local = new LocalTimestamps(clock)
  const locationCells = nameCells(names.locations)
  const queueCells = nameCells(names.queues)
  let columns: { locationId: number; queueId: number; times: number[] } | null = null
  let lines: string[] = []
  const onRecord = (record: CsvRecord) => {
    if (!columns) {
      const fields = Array.from({ length: record.length }, (_, i) => record.field(i))
      const times = fields.flatMap((name, i) => (TIMESTAMP.test(name) ? [i] : []))
      columns = { locationId: fields.indexOf('locationId'), queueId: fields.indexOf('queueId'), times }
      lines.push(csvRecord([...fields, 'locationName', 'queueName', ...times.map((i) => `${fields[i]}Local`)]))
      return
    }
    const text = record.text()
    let line = recordIsSafe(text) ? text : csvRecord(splitQuoted(text)).slice(0, -2)
    line += `,${record.lookup(columns.locationId, locationCells) ?? ''},${record.lookup(columns.queueId, queueCells) ?? ''}`
    for (const i of columns.times) line += record.byteLength(i) === 0 ? ',' : `,${local.format(record.instant(i))}`
    lines.push(`${line}\r\n`)
  }
  const records = new CsvRecords(onRecord)
  const flush = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (lines.length === 0) return
    controller.enqueue(encoder.encode(lines.join('')))
    lines = []
  }
  return new TransformStream({
    transform(chunk, controller) {
      records.push(chunk)
      flush(controller)
    },
    flush(controller) {
      records.end()
      flush(controller)
    },
  })
}

/** The file's name: the server's, with `_names_<zone>` before `.csv`. */
export function namesFileName(serverName: string, zone: string): string {
  return serverName.replace(/\.csv$/, '') + `_names_${zone.replace(/[^A-Za-z0-9_+-]/g, '-')}.csv`
}
