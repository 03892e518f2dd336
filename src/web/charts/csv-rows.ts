// The CSV export read as it arrives, row by row, holding no more than one unfinished line: the
// charts never keep the rows. RFC 4180 as the server writes it (docs/api.md#csv-export): CRLF
// line ends, a field quoted only when it holds a comma, quote or line break, quotes doubled.

/** Splits one complete record (its line end removed) into fields. */
function splitQuoted(record: string): string[] {
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

/** Whether a record so far has an open quoted field (an odd count of quotes): its line break is data. */
function opensQuote(text: string): boolean {
  let quotes = 0
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) quotes++
  return quotes % 2 === 1
}

/**
 * Feeds decoded text to `onRecord`, one array of fields per record (the header row included).
 * `push` takes any piece of text, split anywhere; `end` flushes a last record without a line end.
 */
export class CsvRecords {
  private pending = ''

  constructor(private readonly onRecord: (fields: string[]) => void) {}

  push(text: string): void {
    let start = 0
    const all = this.pending + text
    for (let newline = all.indexOf('\n'); newline !== -1; newline = all.indexOf('\n', newline + 1)) {
      const record = all.slice(start, newline)
      // A line break inside quotes belongs to the field: keep reading to the next one.
      if (record.includes('"') && opensQuote(record)) continue
      this.emit(record)
      start = newline + 1
    }
    this.pending = all.slice(start)
  }

  end(): void {
    if (this.pending !== '') this.emit(this.pending)
    this.pending = ''
  }

  private emit(line: string): void {
    const record = line.endsWith('\r') ? line.slice(0, -1) : line
    this.onRecord(record.includes('"') ? splitQuoted(record) : record.split(','))
  }
}
