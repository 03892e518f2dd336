import { TICKET_FIELDS } from '../contract/vocabulary.ts'
import type { Ticket } from '../contract/schemas.ts'

/**
 * CSV of ticket rows (docs/api.md#csv-export, RFC 4180): comma separator, CRLF line ends, a field
 * quoted only when it holds a comma, quote, CR or LF (quotes doubled), null as an empty field,
 * no byte-order mark. Written by hand for these 12 known columns
 * (docs/decisions/0008-direct-stream-export.md).
 */

/** The header row is the contract's field list, in its order. */
const HEADER = TICKET_FIELDS.join(',')

const NEEDS_QUOTES = /[",\r\n]/

export function csvField(value: string | number | null): string {
  if (value === null) return ''
  if (typeof value === 'number') return String(value)
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

export function csvHeader(demo: boolean): string {
  return HEADER + (demo ? ',demo' : '') + '\r\n'
}

/** One CSV line (with its CRLF) for a row; `demo` appends the demo column's value. */
export function csvLine(row: Ticket, demo: boolean): string {
  return (
    csvField(row.id) + ',' +
    csvField(row.number) + ',' +
    csvField(row.queueId) + ',' +
    csvField(row.locationId) + ',' +
    csvField(row.status) + ',' +
    csvField(row.createdAt) + ',' +
    csvField(row.calledAt) + ',' +
    csvField(row.completedAt) + ',' +
    csvField(row.cancelledAt) + ',' +
    csvField(row.skippedAt) + ',' +
    csvField(row.noShowAt) + ',' +
    csvField(row.calledByDeviceSessionId) +
    (demo ? ',1\r\n' : '\r\n')
  )
}
