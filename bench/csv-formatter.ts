/**
 * The export's CSV formatter, measured against fast-csv's formatter on the same rows
 * (`bun bench/csv-formatter.ts <tenant file> <from> <to>`; also run by `bun run bench`). Both
 * must produce the same bytes; the figure is the time to format rows already in memory, so
 * SQLite is not in it.
 */
import { Database } from 'bun:sqlite'
import { format } from 'fast-csv'
import { csvHeader, csvLine } from '../src/export/csv-format.ts'
import { TICKET_FIELDS } from '../src/contract/vocabulary.ts'
import { bindValues, compileTicketQuery } from '../src/tickets/repository.ts'
import type { Ticket } from '../src/contract/schemas.ts'
import { parseTicketQuery } from '../src/tickets/query.ts'
import { summarise, type Summary } from './stats.ts'

/** The rows the export would write for [from, to): the service's own export query, read whole. */
export function readExportRows(file: string, from: string, to: string): Ticket[] {
  const query = parseTicketQuery(new URLSearchParams({ from, to }), 'export')
  const compiled = compileTicketQuery(query, { afterCursor: false, withLimit: false })
  const db = new Database(file, { readonly: true })
  try {
    return db.query(compiled.sql).all(...bindValues(compiled, query)) as Ticket[]
  } finally {
    db.close()
  }
}

function oursFormat(rows: Ticket[]): string {
  let out = csvHeader(false)
  for (const row of rows) out += csvLine(row, false)
  return out
}

function fastCsvFormat(rows: Ticket[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: string[] = []
    const stream = format({ headers: [...TICKET_FIELDS], rowDelimiter: '\r\n', includeEndRowDelimiter: true })
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
    stream.on('error', reject)
    stream.on('end', () => resolve(chunks.join('')))
    for (const row of rows) stream.write(row)
    stream.end()
  })
}

export async function compareFormatters(rows: Ticket[], runs: number): Promise<{ ours: Summary; fastCsv: Summary; identical: boolean }> {
  const identical = oursFormat(rows) === (await fastCsvFormat(rows))
  const ours: number[] = []
  const fastCsv: number[] = []
  for (let i = 0; i < runs; i++) {
    let started = performance.now()
    oursFormat(rows)
    ours.push(rows.length / ((performance.now() - started) / 1000))
    started = performance.now()
    await fastCsvFormat(rows)
    fastCsv.push(rows.length / ((performance.now() - started) / 1000))
  }
  return { ours: summarise(ours), fastCsv: summarise(fastCsv), identical }
}

if (import.meta.main) {
  const [file, from, to] = process.argv.slice(2)
  if (!file || !from || !to) throw new Error('usage: bun bench/csv-formatter.ts <tenant file> <from> <to>')
  const rows = readExportRows(file, from, to)
  rows.push({ ...rows[0]!, id: 'a "quoted", id', calledByDeviceSessionId: 'line\r\nbreak' })
  console.log(await compareFormatters(rows, 5))
}
