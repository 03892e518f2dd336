// The file a spreadsheet reads as it is: the export's rows and columns unchanged in value, plus
// the location's and the queue's names and, for each timestamp, its wall-clock time in the
// chosen zone as `YYYY-MM-DD HH:MM:SS` (`createdAtLocal`, …), which LibreOffice and Excel read as
// dates. Made record by record as the export streams, as bytes: a record is copied as it is when
// no field would start a formula, names are encoded once per id and local times written digit
// by digit, so the file costs little more than the plain one and no more than a chunk is held.

import { ByteKeys, CsvRecords, splitQuoted, type CsvRecord } from './charts/csv-rows.ts'
import { UTF8_BOM, csvCell, csvRecord, plainCell, plainRecord, startsFormula } from './csv-cells.ts'
import { LocalClock, LocalTimestamps } from './zone.ts'

export interface NamesOfPlaces {
  /** Location id → its name as the page shows it. */
  locations: ReadonlyMap<string, string>
  /** Queue id → its name. */
  queues: ReadonlyMap<string, string>
}

/** Location id → the zone of its local times; `own`: the locations whose zone is their own (the rest use the chosen one). */
export interface LocationZones {
  byLocation: ReadonlyMap<string, string>
  own: ReadonlySet<string>
}

/** The export's timestamp columns are the ones named …At (createdAt, calledAt, …). */
const TIMESTAMP = /At$/
const COMMA = 0x2c
const CRLF = [0x0d, 0x0a]
const encoder = new TextEncoder()

/** Id bytes → the name's cell as bytes, ready to write (none for an id the page does not know). */
function nameCells(names: ReadonlyMap<string, string>, cell: (value: string) => string): ByteKeys<Uint8Array> {
  const decoder = new TextDecoder()
  return new ByteKeys((bytes) => encoder.encode(cell(names.get(decoder.decode(bytes)) ?? '')))
}

/** A growing output buffer for one chunk's records. */
class Output {
  bytes = new Uint8Array(1 << 16)
  length = 0

  /** Room for `more` bytes after the current end. */
  reserve(more: number): void {
    if (this.length + more <= this.bytes.length) return
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + more))
    grown.set(this.bytes.subarray(0, this.length))
    this.bytes = grown
  }

  write(bytes: Uint8Array): void {
    this.reserve(bytes.length)
    this.bytes.set(bytes, this.length)
    this.length += bytes.length
  }

  /** The bytes written since the last take, copied out. */
  take(): Uint8Array {
    const out = this.bytes.slice(0, this.length)
    this.length = 0
    return out
  }
}

/** Whether an unquoted record can be copied as it is: no field would start a formula. */
function copiesAsIs(record: CsvRecord): boolean {
  for (let i = 0; i < record.length; i++) if (startsFormula(record.firstByte(i))) return false
  return true
}

/** A transform from the export's CSV bytes to the file with names and local times (every cell formula-safe), starting with UTF8_BOM. */
/**
 * `locationZones`: each location's own local times, the columns `localTimeZone` and
 * `localTimeZoneFrom` (`location`, or `chosen` for one without a zone of its own, whose times are
 * the chosen zone's), and only the rows created in its own local days `days` (the export holds
 * every location's days).
 */
export function namesAndLocalTimes(
  names: NamesOfPlaces,
  clock: LocalClock,
  locationZones: LocationZones | null = null,
  days: { first: number; last: number } | null = null,
  /** false for the .xlsx worker: its cells are never formulas, so no apostrophe is added. */
  guard = true,
): TransformStream<Uint8Array, Uint8Array> {
  const cellOf = guard ? csvCell : plainCell
  const recordOf = guard ? csvRecord : plainRecord
  const chosen = new LocalTimestamps(clock)
  // Each location's own local times when `locationZones` is given: one writer per zone and
  // whose zone it is, found with the location id's bytes, and the two columns' cells.
  const writers = new Map<string, { local: LocalTimestamps; clock: LocalClock; cell: Uint8Array }>()
  const decoder = new TextDecoder()
  const ownTimes = locationZones && new ByteKeys((bytes) => {
    const id = decoder.decode(bytes)
    const zone = locationZones.byLocation.get(id) ?? clock.zone
    const from = locationZones.own.has(id) ? 'location' : 'chosen'
    let writer = writers.get(`${zone} ${from}`)
    const own = new LocalClock(zone)
    if (!writer) writers.set(`${zone} ${from}`, (writer = { local: new LocalTimestamps(own), clock: own, cell: encoder.encode(`${cellOf(zone)},${cellOf(from)}`) }))
    return writer
  })
  const locationCells = nameCells(names.locations, cellOf)
  const queueCells = nameCells(names.queues, cellOf)
  const output = new Output()
  let columns: { locationId: number; queueId: number; createdAt: number; times: number[] } | null = null

  const onRecord = (record: CsvRecord) => {
    if (!columns) {
      const fields = Array.from({ length: record.length }, (_, i) => record.field(i))
      const times = fields.flatMap((name, i) => (TIMESTAMP.test(name) ? [i] : []))
      columns = { locationId: fields.indexOf('locationId'), queueId: fields.indexOf('queueId'), createdAt: fields.indexOf('createdAt'), times }
      output.write(encoder.encode(UTF8_BOM + recordOf([...fields, 'locationName', 'queueName', ...times.map((i) => `${fields[i]}Local`), ...(ownTimes ? ['localTimeZone', 'localTimeZoneFrom'] : [])])))
      return
    }
    const own = ownTimes ? record.lookup(columns.locationId, ownTimes)! : null
    if (own && days) {
      const created = record.instant(columns.createdAt)
      const day = Math.floor((created + own.clock.offset(created)) / 86_400_000)
      if (day < days.first || day > days.last) return
    }
    const raw = record.unquotedBytes()
    if (raw && (!guard || copiesAsIs(record))) output.write(raw)
    else output.write(encoder.encode(recordOf(raw ? Array.from({ length: record.length }, (_, i) => record.field(i)) : splitQuoted(record.text())).slice(0, -2)))
    const location = record.lookup(columns.locationId, locationCells)!
    const queue = record.lookup(columns.queueId, queueCells)!
    const local = own ? own.local : chosen
    output.reserve(location.length + queue.length + columns.times.length * 20 + (own ? own.cell.length + 1 : 0) + 4)
    const bytes = output.bytes
    let at = output.length
    bytes[at++] = COMMA
    bytes.set(location, at)
    at += location.length
    bytes[at++] = COMMA
    bytes.set(queue, at)
    at += queue.length
    for (const i of columns.times) {
      bytes[at++] = COMMA
      if (record.byteLength(i) > 0) at = local.writeInto(bytes, at, record.instant(i))
    }
    if (own) {
      bytes[at++] = COMMA
      bytes.set(own.cell, at)
      at += own.cell.length
    }
    bytes[at++] = CRLF[0]!
    bytes[at++] = CRLF[1]!
    output.length = at
  }

  const records = new CsvRecords(onRecord)
  return new TransformStream({
    transform(chunk, controller) {
      records.push(chunk)
      if (output.length > 0) controller.enqueue(output.take())
    },
    flush(controller) {
      records.end()
      if (output.length > 0) controller.enqueue(output.take())
    },
  })
}

/** The name of the .xlsx made from a CSV. */
export function workbookName(csvName: string): string {
  return csvName.replace(/\.csv$/, '.xlsx')
}

/** The file's name: the server's, with `_names_<zone>` before `.csv`. */
export function namesFileName(serverName: string, zone: string): string {
  return serverName.replace(/\.csv$/, '') + `_names_${zone.replace(/[^A-Za-z0-9_+-]/g, '-')}.csv`
}
