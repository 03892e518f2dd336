// The CSV export read as it arrives, record by record, as bytes: no row is kept, and a record
// becomes strings only for the fields the charts read. RFC 4180 as the server writes it
// (docs/api.md#csv-export): CRLF line ends, a field quoted only when it holds a comma, quote or
// line break, quotes doubled. A record with a quote takes the slower, general path.

const LF = 0x0a
const CR = 0x0d
const QUOTE = 0x22
const COMMA = 0x2c

const utf8 = new TextDecoder()

/** Splits one complete record (its line end removed) into fields, quotes undone. */
export function splitQuoted(record: string): string[] {
  const fields: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < record.length; i++) {
    const char = record[i]!
    if (quoted) {
      if (char !== '"') field += char
      else if (record[i + 1] === '"') (field += '"'), i++
      else quoted = false
    } else if (char === '"') quoted = true
    else if (char === ',') fields.push(field), (field = '')
    else field += char
  }
  fields.push(field)
  return fields
}

/**
 * One record of the file, as bytes. `field(i)` gives field i as a string and `bytesOf(i)` its
 * bytes (for numbers read without a string); both valid only during the call that hands it over.
 */
export class CsvRecord {
  private bytes: Uint8Array = new Uint8Array(0)
  private start = 0
  private end = 0
  /** Offsets of the field starts, and of the end of each field (the comma or the record's end). */
  private readonly starts: number[] = []
  private readonly ends: number[] = []
  private fields: string[] | null = null

  /** Takes bytes[start, end): one record without its line end. */
  reset(bytes: Uint8Array, start: number, end: number, quoted: boolean): void {
    this.bytes = bytes
    this.start = start
    this.end = end
    this.starts.length = 0
    this.ends.length = 0
    this.fields = quoted ? splitQuoted(utf8.decode(bytes.subarray(start, end))) : null
    if (quoted) return
    let fieldStart = start
    for (let i = start; i < end; i++) {
      if (bytes[i] !== COMMA) continue
      this.starts.push(fieldStart)
      this.ends.push(i)
      fieldStart = i + 1
    }
    this.starts.push(fieldStart)
    this.ends.push(end)
  }

  get length(): number {
    return this.fields ? this.fields.length : this.starts.length
  }

  field(i: number): string {
    if (this.fields) return this.fields[i] ?? ''
    if (i >= this.starts.length) return ''
    const from = this.starts[i]!
    const to = this.ends[i]!
    // Ids, statuses and timestamps are ASCII: one character per byte, no decoder needed.
    let ascii = true
    for (let j = from; j < to; j++) if (this.bytes[j]! >= 0x80) ascii = false
    return ascii ? String.fromCharCode(...this.bytes.subarray(from, to)) : utf8.decode(this.bytes.subarray(from, to))
  }

  /** Field i's bytes (an unquoted record's own, a quoted one's re-encoded). */
  bytesOf(i: number): Uint8Array {
    if (this.fields) return new TextEncoder().encode(this.fields[i] ?? '')
    if (i >= this.starts.length) return new Uint8Array(0)
    return this.bytes.subarray(this.starts[i], this.ends[i])
  }

  /** The whole record as text (for a message about a record the charts cannot read). */
  text(): string {
    return utf8.decode(this.bytes.subarray(this.start, this.end))
  }
}

/**
 * Feeds the records of a CSV byte stream to `onRecord`, the header row included. `push` takes
 * chunks split anywhere (even inside a UTF-8 character); `end` flushes a last record without a line end.
 */
export class CsvRecords {
  private pending: Uint8Array = new Uint8Array(0)
  private readonly record = new CsvRecord()

  constructor(private readonly onRecord: (record: CsvRecord) => void) {}

  push(chunk: Uint8Array): void {
    let bytes = chunk
    if (this.pending.length > 0) {
      bytes = new Uint8Array(this.pending.length + chunk.length)
      bytes.set(this.pending)
      bytes.set(chunk, this.pending.length)
    }
    let start = 0
    let quotes = 0
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]
      if (byte === QUOTE) quotes++
      else if (byte === LF && quotes % 2 === 0) {
        // A line break inside quotes (an odd count so far) belongs to the field.
        this.emit(bytes, start, i, quotes > 0)
        start = i + 1
        quotes = 0
      }
    }
    this.pending = bytes.slice(start)
  }

  end(): void {
    if (this.pending.length > 0) this.emit(this.pending, 0, this.pending.length, this.pending.includes(QUOTE))
    this.pending = new Uint8Array(0)
  }

  private emit(bytes: Uint8Array, start: number, end: number, quoted: boolean): void {
    this.record.reset(bytes, start, end > start && bytes[end - 1] === CR ? end - 1 : end, quoted)
    this.onRecord(this.record)
  }
}

const DIGIT_0 = 0x30

/** Two or four ASCII digits at `at`, or NaN. */
function digits(bytes: Uint8Array, at: number, count: number): number {
  let value = 0
  for (let i = at; i < at + count; i++) {
    const digit = bytes[i]! - DIGIT_0
    if (digit < 0 || digit > 9) return Number.NaN
    value = value * 10 + digit
  }
  return value
}

let cachedDay = -1
let cachedDayMs = 0

/**
 * Epoch ms of the API's instant form `YYYY-MM-DDTHH:MM:SS.sssZ` (24 bytes), read from the bytes
 * without a string; anything else through Date.parse. The day's midnight is kept from the
 * previous call: rows come in creation order, so most share it.
 */
export function instantMs(bytes: Uint8Array): number {
  if (bytes.length !== 24 || bytes[10] !== 0x54 || bytes[23] !== 0x5a) return Date.parse(utf8.decode(bytes))
  const year = digits(bytes, 0, 4)
  const month = digits(bytes, 5, 2)
  const day = digits(bytes, 8, 2)
  const key = year * 10_000 + month * 100 + day
  if (key !== cachedDay) {
    const midnight = new Date(0)
    midnight.setUTCFullYear(year, month - 1, day)
    cachedDayMs = midnight.getTime()
    cachedDay = key
  }
  return cachedDayMs + ((digits(bytes, 11, 2) * 60 + digits(bytes, 14, 2)) * 60 + digits(bytes, 17, 2)) * 1000 + digits(bytes, 20, 3)
}
