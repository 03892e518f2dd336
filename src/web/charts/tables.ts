// Each chart's numbers as a table: the HTML <table> under the chart and its CSV download are
// made from the same rows, so the picture, the table and the file cannot disagree.

import { TICKET_STATUSES } from '../../client/index.ts'
import { OUTCOMES, WEEKDAYS, type ChartNumbers } from './aggregate.ts'

export type ChartId = 'per-day' | 'wait' | 'arrivals' | 'outcome'

export interface NumbersTable {
  id: ChartId
  /** The chart's title, the table's caption. */
  title: string
  headers: string[]
  rows: string[][]
}

/** Minutes to one decimal, from milliseconds. */
export function minutes(ms: number): string {
  return (Math.round(ms / 6_000) / 10).toFixed(1)
}

/** A share as a percentage to one decimal. */
export function percent(part: number, whole: number): string {
  return whole === 0 ? '0.0' : (Math.round((part / whole) * 1000) / 10).toFixed(1)
}

export function numbersTables(numbers: ChartNumbers): NumbersTable[] {
  return [
    {
      id: 'per-day',
      title: 'Tickets per day',
      headers: ['Day', ...TICKET_STATUSES, 'Total'],
      rows: numbers.days.map(({ day, counts }) => [day, ...counts.map(String), String(counts.reduce((a, b) => a + b, 0))]),
    },
    {
      id: 'wait',
      title: 'Wait by queue',
      headers: ['Queue', 'Called tickets', 'Median wait (min)', '90th percentile (min)'],
      rows: numbers.waits.map((row) => [row.queue, String(row.called), minutes(row.medianMs), minutes(row.p90Ms)]),
    },
    {
      id: 'arrivals',
      title: 'Arrivals by hour',
      headers: ['Hour', ...WEEKDAYS],
      rows: Array.from({ length: 24 }, (_, hour) => [String(hour), ...WEEKDAYS.map((_, day) => String(numbers.arrivals[day]![hour]))]),
    },
    {
      id: 'outcome',
      title: 'Outcome by queue',
      headers: ['Queue', ...OUTCOMES, 'Total'],
      rows: numbers.outcomes.map(({ queue, counts }) => {
        const total = counts.reduce((a, b) => a + b, 0)
        return [queue, ...counts.map((count) => percent(count, total)), String(total)]
      }),
    },
  ]
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

/** The table as CSV (the export's dialect: CRLF, quoted only when needed), header row first. */
export function tableCsv(table: NumbersTable): string {
  return [table.headers, ...table.rows].map((row) => row.map(csvField).join(',') + '\r\n').join('')
}
