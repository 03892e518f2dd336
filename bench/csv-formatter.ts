/**
 * The export's CSV formatter, measured against fast-csv's formatter on the same rows
 * (`bun bench/csv-formatter.ts`; also run by `bun run bench`). Both must produce the same bytes;
 * the figure is the time to format rows already in memory, so SQLite is not in it.
 */
import { format } from 'fast-csv'
import { csvHeader, csvLine, CSV_HEADER_FIELDS } from '../src/export/csv-format.ts'
import type { TicketRow } from '../src/tickets/repository.ts'
import { summarise, type Summary } from './stats.ts'

function oursFormat(rows: TicketRow[]): string {
  let out = csvHeader(false)
  for (const row of rows) out += csvLine(row, false)
  return out
}

function fastCsvFormat(rows: TicketRow[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: string[] = []
    const stream = format({ headers: [...CSV_HEADER_FIELDS], rowDelimiter: '\r\n', includeEndRowDelimiter: true })
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
    stream.on('error', reject)
    stream.on('end', () => resolve(chunks.join('')))
    for (const row of rows) stream.write(row)
    stream.end()
  })
}

export async function compareFormatters(rows: TicketRow[], runs: number): Promise<{ ours: Summary; fastCsv: Summary; identical: boolean }> {
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
  const { Database } = await import('bun:sqlite')
  const file = process.argv[2]
  if (!file) throw new Error('usage: bun bench/csv-formatter.ts <tenant file>')
  const db = new Database(file, { readonly: true })
  const rows = db
    .query(`SELECT id, number, queue_id AS queueId, location_id AS locationId, status, created_at AS createdAt, called_at AS calledAt, completed_at AS completedAt,
      cancelled_at AS cancelledAt, skipped_at AS skippedAt, no_show_at AS noShowAt, called_by_device_session_id AS calledByDeviceSessionId FROM tickets ORDER BY created_at, id LIMIT 100000`)
    .all() as TicketRow[]
  rows.push({ ...rows[0]!, id: 'a "quoted", id', calledByDeviceSessionId: 'line\r\nbreak' })
  console.log(await compareFormatters(rows, 5))
}
