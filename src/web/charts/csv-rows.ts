// The CSV export read as it arrives, record by record, as bytes: no row is kept, and the fields
// the charts read are read where they are (instants as numbers, statuses and queue ids looked
// up by their bytes), so a million rows make no garbage of their own. RFC 4180 as the server
// writes it (docs/api.md#csv-export): CRLF line ends, a field quoted only when it holds a comma,
// quote or line break, quotes doubled. A record with a quote takes the slower, general path.

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
  /**
   * Offsets of the field starts, and of the end of each field (the comma or the record's end),
   * in typed arrays reused from record to record: a million records, no array allocated for each.
   */
  private starts = new Int32Array(32)
  private ends = new Int32Array(32)
  private count = 0
  private fields: string[] | null = null

  /** Takes bytes[start, end): one record without its line end. */
  reset(bytes: Uint8Array, start: number, end: number, quoted: boolean): void {
    this.bytes = bytes
    this.start = start
    this.end = end
    this.count = 0
    this.fields = quoted ? splitQuoted(utf8.decode(bytes.subarray(start, end))) : null
    if (quoted) return
    let fieldStart = start
    for (let i = start; i < end; i++) {
      if (bytes[i] !== COMMA) continue
      this.addField(fieldStart, i)
      fieldStart = i + 1
    }
    this.addField(fieldStart, end)
  }

  private addField(start: number, end: number): void {
    if (this.count === this.starts.length) {
      const starts = new Int32Array(this.count * 2)
      const ends = new Int32Array(this.count * 2)
      starts.set(this.starts)
      ends.set(this.ends)
      this.starts = starts
      this.ends = ends
    }
    this.starts[this.count] = start
    this.ends[this.count++] = end
  }

  get length(): number {
    return this.fields ? this.fields.length : this.count
  }

  field(i: number): string {
    if (this.fields) return this.fields[i] ?? ''
    if (i >= this.count) return ''
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
    if (i >= this.count) return new Uint8Array(0)
    return this.bytes.subarray(this.starts[i], this.ends[i])
  }

  /** Field i's length in bytes. */
  byteLength(i: number): number {
    if (this.fields) return this.bytesOf(i).length
    return i < this.count ? this.ends[i]! - this.starts[i]! : 0
  }

  /** Field i as an instant (see instantMs), read in place: no view or string for the field. */
  instant(i: number): number {
    if (this.fields || i >= this.count) return instantMs(this.bytesOf(i))
    return instantMsAt(this.bytes, this.starts[i]!, this.ends[i]!)
  }

  /** Field i looked up in `keys`, read in place: no view or string for the field. */
  lookup<T>(i: number, keys: ByteKeys<T>): T | undefined {
    if (this.fields || i >= this.count) {
      const bytes = this.bytesOf(i)
      return keys.get(bytes, 0, bytes.length)
    }
    return keys.get(this.bytes, this.starts[i]!, this.ends[i]!)
  }

  /** The record's own bytes when it has no quoted field (a view, valid during the call), else null. */
  unquotedBytes(): Uint8Array | null {
    return this.fields ? null : this.bytes.subarray(this.start, this.end)
  }

  /** The first byte of field i of an unquoted record, or -1 for an empty field. */
  firstByte(i: number): number {
    return i < this.count && this.ends[i]! > this.starts[i]! ? this.bytes[this.starts[i]!]! : -1
  }

  /** The whole record as text (for a message about a record the charts cannot read). */
  text(): string {
    return utf8.decode(this.bytes.subarray(this.start, this.end))
  }
}

/**
 * A map from byte sequences to values, looked up with the bytes in place (a hash of the bytes and
 * their length, the bytes compared on a hit): the few distinct statuses and queue ids of a
 * million rows, without a string made for each row. `miss` gives the value of bytes not yet
 * known, once; they are copied and kept.
 */
export class ByteKeys<T> {
  private readonly buckets = new Map<number, { bytes: Uint8Array; value: T }[]>()

  constructor(private readonly miss?: (bytes: Uint8Array) => T | undefined) {}

  set(bytes: Uint8Array, value: T): void {
    const hash = hashOf(bytes, 0, bytes.length)
    const bucket = this.buckets.get(hash)
    const entry = { bytes: bytes.slice(), value }
    if (bucket) bucket.push(entry)
    else this.buckets.set(hash, [entry])
  }

  get(bytes: Uint8Array, from: number, to: number): T | undefined {
    const bucket = this.buckets.get(hashOf(bytes, from, to))
    if (bucket) {
      for (const entry of bucket) if (sameBytes(entry.bytes, bytes, from, to)) return entry.value
    }
    if (!this.miss) return undefined
    const key = bytes.slice(from, to)
    const value = this.miss(key)
    if (value !== undefined) this.set(key, value)
    return value
  }
}

/** FNV-1a of bytes[from, to), mixed with the length, kept to 30 bits (a small integer in V8). */
function hashOf(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5 ^ (to - from)
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  return hash & 0x3fffffff
}

function sameBytes(key: Uint8Array, bytes: Uint8Array, from: number, to: number): boolean {
  if (key.length !== to - from) return false
  for (let i = 0; i < key.length; i++) if (key[i] !== bytes[from + i]) return false
  return true
}

/**
 * Feeds the records of a CSV byte stream to `onRecord`, the header row included. `push` takes
 * chunks split anywhere (even inside a UTF-8 character); `end` flushes a last record without a line end.
 */
export class CsvRecords {
  /** The start of a record the last chunk ended inside, and the quotes it has so far. */
  private pending: Uint8Array = new Uint8Array(0)
  private pendingQuotes = 0
  private readonly record = new CsvRecord()

  constructor(private readonly onRecord: (record: CsvRecord) => void) {}

  push(chunk: Uint8Array): void {
    let start = 0
    let quotes = this.pendingQuotes
    let i = 0
    if (this.pending.length > 0) {
      // Only the record split between two chunks is copied into one piece; the rest of the chunk
      // is read where it is.
      for (; i < chunk.length; i++) {
        const byte = chunk[i]
        if (byte === QUOTE) quotes++
        else if (byte === LF && quotes % 2 === 0) break
      }
      const joined = new Uint8Array(this.pending.length + i)
      joined.set(this.pending)
      joined.set(chunk.subarray(0, i), this.pending.length)
      if (i === chunk.length) {
        this.pending = joined
        this.pendingQuotes = quotes
        return
      }
      this.emit(joined, 0, joined.length, quotes > 0)
      start = ++i
      quotes = 0
    }
    for (; i < chunk.length; i++) {
      const byte = chunk[i]
      if (byte === QUOTE) quotes++
      else if (byte === LF && quotes % 2 === 0) {
        // A line break inside quotes (an odd count so far) belongs to the field.
        this.emit(chunk, start, i, quotes > 0)
        start = i + 1
        quotes = 0
      }
    }
    this.pending = chunk.slice(start)
    this.pendingQuotes = quotes
  }

  end(): void {
    if (this.pending.length > 0) this.emit(this.pending, 0, this.pending.length, this.pending.includes(QUOTE))
    this.pending = new Uint8Array(0)
    this.pendingQuotes = 0
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
  return instantMsAt(bytes, 0, bytes.length)
}

/** instantMs of bytes[from, to). */
export function instantMsAt(bytes: Uint8Array, from: number, to: number): number {
  if (to - from !== 24 || bytes[from + 10] !== 0x54 || bytes[from + 23] !== 0x5a) return Date.parse(utf8.decode(bytes.subarray(from, to)))
  const year = digits(bytes, from, 4)
  const month = digits(bytes, from + 5, 2)
  const day = digits(bytes, from + 8, 2)
  const key = year * 10_000 + month * 100 + day
  if (key !== cachedDay) {
    const midnight = new Date(0)
    midnight.setUTCFullYear(year, month - 1, day)
    cachedDayMs = midnight.getTime()
    cachedDay = key
  }
  return cachedDayMs + ((digits(bytes, from + 11, 2) * 60 + digits(bytes, from + 14, 2)) * 60 + digits(bytes, from + 17, 2)) * 1000 + digits(bytes, from + 20, 3)
}
