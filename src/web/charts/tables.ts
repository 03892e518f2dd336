// Each chart's numbers as a table: the HTML <table> under the chart and its CSV download are
// made from the same rows, so the picture, the table and the file cannot disagree.

import { TICKET_STATUSES, type TicketStatus } from '../../client/index.ts'
import { csvRecord } from '../csv-cells.ts'
import { dayNumber, weekday, dayKey } from '../zone.ts'
import { OUTCOMES, WEEKDAYS, type ChartNumbers } from './aggregate.ts'

export type ChartId = 'per-day' | 'per-week' | 'per-location' | 'wait' | 'arrivals' | 'outcome' | 'service' | 'service-queue' | 'target' | 'target-queue'

/** The statuses in the form's words: legends and tables say "No-show", not NO_SHOW. */
export const STATUS_WORDS: Record<TicketStatus, string> = {
  WAITING: 'Waiting', CALLED: 'Called', COMPLETED: 'Completed', CANCELED: 'Canceled', SKIPPED: 'Skipped', NO_SHOW: 'No-show',
}

export interface NumbersTable {
  id: ChartId
  /** The chart's title, the table's caption. */
  title: string
  headers: string[]
  rows: string[][]
  /** A word shown after a row's first cell in the table (not in its CSV): "today, so far". */
  rowNotes?: Map<number, string>
  /** The same figures per queue, a second table (and CSV) under the chart's per-location one. */
  perQueue?: NumbersTable
}

/** "10" or "7.5": a target in minutes as the tables' headings say it. */
const targetWords = (minutes: number) => String(minutes)

/** Minutes to one decimal, from milliseconds. */
export function minutes(ms: number): string {
  return (Math.round(ms / 6_000) / 10).toFixed(1)
}

/** A share as a percentage to one decimal. */
export function percent(part: number, whole: number): string {
  return whole === 0 ? '0.0' : (Math.round((part / whole) * 1000) / 10).toFixed(1)
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0)

/**
 * A row's label in a chart: both names for a queue, since one queue name can exist in several
 * locations; the one name of a location's row (its queue empty) or of the rest's row.
 */
export function placeLabel({ location, queue }: { location: string; queue: string }): string {
  return location && queue ? `${location} · ${queue}` : location || queue
}

/**
 * The days' counts summed per local week (Monday to Sunday), each week named by its Monday; the
 * first and last week of a range may hold fewer days, said in "Days in range".
 */
export function weeklyTable(numbers: ChartNumbers): NumbersTable {
  const weeks = new Map<number, { days: number; counts: number[] }>()
  for (const { day, counts } of numbers.days) {
    const number = dayNumber(day)!
    const monday = number - weekday(number)
    const week = weeks.get(monday) ?? { days: 0, counts: new Array<number>(counts.length).fill(0) }
    week.days++
    counts.forEach((count, i) => (week.counts[i]! += count))
    weeks.set(monday, week)
  }
  return {
    id: 'per-week',
    title: 'Tickets per week',
    headers: ['Week (from Monday)', 'Days in range', ...TICKET_STATUSES.map((status) => STATUS_WORDS[status]), 'Total'],
    rows: [...weeks].map(([monday, { days, counts }]) => [dayKey(monday), String(days), ...counts.map(String), String(sum(counts))]),
  }
}

export function numbersTables(numbers: ChartNumbers): NumbersTable[] {
  return [
    {
      id: 'per-day',
      title: 'Tickets per day',
      headers: ['Day', ...TICKET_STATUSES.map((status) => STATUS_WORDS[status]), 'Total'],
      rows: numbers.days.map(({ day, counts }) => [day, ...counts.map(String), String(sum(counts))]),
    },
    {
      id: 'per-location',
      title: 'Tickets by location',
      headers: ['Location', ...TICKET_STATUSES.map((status) => STATUS_WORDS[status]), 'Total'],
      rows: numbers.locations.map(({ location, counts }) => [location, ...counts.map(String), String(sum(counts))]),
    },
    {
      id: 'wait',
      title: 'Wait by queue',
      headers: ['Location', 'Queue', 'Called tickets', 'Median wait (min)', '90th percentile (min)'],
      rows: numbers.waits.map((row) => [row.location, row.queue, String(row.called), minutes(row.medianMs), minutes(row.p90Ms)]),
    },
    {
      id: 'arrivals',
      title: 'Arrivals by hour',
      headers: ['Hour', ...WEEKDAYS, 'All days'],
      rows: Array.from({ length: 24 }, (_, hour) => {
        const counts = WEEKDAYS.map((_, day) => numbers.arrivals[day]![hour]!)
        return [String(hour), ...counts.map(String), String(sum(counts))]
      }),
    },
    {
      id: 'service',
      title: 'Service time by location',
      headers: ['Location', 'Completed tickets', 'Median service (min)', '90th percentile (min)'],
      rows: numbers.service.locations.map((row) => [row.location, String(row.completed), minutes(row.medianMs), minutes(row.p90Ms)]),
      perQueue: {
        id: 'service-queue',
        title: 'Service time by queue',
        headers: ['Location', 'Queue', 'Completed tickets', 'Median service (min)', '90th percentile (min)'],
        rows: numbers.service.queues.map((row) => [row.location, row.queue, String(row.completed), minutes(row.medianMs), minutes(row.p90Ms)]),
      },
    },
    {
      id: 'target',
      title: `Called within ${targetWords(numbers.target.minutes)} min by location`,
      headers: ['Location', 'Called tickets', `Within ${targetWords(numbers.target.minutes)} min`, 'Share (%)'],
      rows: numbers.target.locations.map((row) => [row.location, String(row.called), String(row.within), percent(row.within, row.called)]),
      perQueue: {
        id: 'target-queue',
        title: `Called within ${targetWords(numbers.target.minutes)} min by queue`,
        headers: ['Location', 'Queue', 'Called tickets', `Within ${targetWords(numbers.target.minutes)} min`, 'Share (%)'],
        rows: numbers.target.queues.map((row) => [row.location, row.queue, String(row.called), String(row.within), percent(row.within, row.called)]),
      },
    },
    {
      id: 'outcome',
      title: 'Outcome by queue',
      headers: ['Location', 'Queue', ...OUTCOMES.map((status) => STATUS_WORDS[status]), 'Total'],
      rows: numbers.outcomes.map(({ location, queue, counts }) => {
        const total = sum(counts)
        return [location, queue, ...counts.map((count) => percent(count, total)), String(total)]
      }),
    },
  ]
}

/** The table as CSV (the export's dialect: CRLF, quoted only when needed, no formula), header row first. */
export function tableCsv(table: NumbersTable): string {
  return [table.headers, ...table.rows].map(csvRecord).join('')
}
