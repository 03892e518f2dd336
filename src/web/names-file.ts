// The file a spreadsheet reads as it is: the export's rows and columns unchanged in value, plus
// the location's and the queue's names and, for each timestamp, its wall-clock time in the
// chosen zone as `YYYY-MM-DD HH:MM:SS` (`createdAtLocal`, …), which LibreOffice and Excel read as
// dates. Made record by record as the export streams: no more than one chunk is held.

import { CsvRecords, type CsvRecord } from './charts/csv-rows.ts'
import { csvRecord } from './csv-cells.ts'
import { localTimestamp, type LocalClock } from './zone.ts'

export interface NamesOfPlaces {
  /** Location id → its name as the page shows it. */
  locations: ReadonlyMap<string, string>
  /** Queue id → its name. */
  queues: ReadonlyMap<string, string>
}

/** The export's timestamp columns are the ones named …At (createdAt, calledAt, …). */
const TIMESTAMP = /At$/

/** A transform from the export's CSV bytes to the file with names and local times (every cell formula-safe). */
export function namesAndLocalTimes(names: NamesOfPlaces, clock: LocalClock): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder()
  let columns: { count: number; locationId: number; queueId: number; times: number[] } | null = null
  let lines: string[] = []
  const onRecord = (record: CsvRecord) => {
    const fields = Array.from({ length: record.length }, (_, i) => record.field(i))
    if (!columns) {
      const times = fields.flatMap((name, i) => (TIMESTAMP.test(name) ? [i] : []))
      columns = { count: fields.length, locationId: fields.indexOf('locationId'), queueId: fields.indexOf('queueId'), times }
      lines.push(csvRecord([...fields, 'locationName', 'queueName', ...times.map((i) => `${fields[i]}Local`)]))
      return
    }
    const { locationId, queueId, times } = columns
    const local = times.map((i) => (record.byteLength(i) === 0 ? '' : localTimestamp(record.instant(i), clock)))
    lines.push(csvRecord([...fields, names.locations.get(fields[locationId] ?? '') ?? '', names.queues.get(fields[queueId] ?? '') ?? '', ...local]))
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
