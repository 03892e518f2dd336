// The date range of the form: local days of the page's time zone, "To" included, turned into
// the API's [from, to) bounds: From's midnight and the midnight after To, as UTC instants.

import { MAX_RANGE_DAYS } from '../client/index.ts'
import { dayKey, dayNumber, type DayNumber, type LocalClock } from './zone.ts'

/** What one file (and so the Preview and Download buttons) covers at most. */
export const MAX_DAYS = MAX_RANGE_DAYS
/** What <input type="date"> gives: a year of four or more digits (Chromium accepts up to 275760). */
const DAY_VALUE = /^(\d{4,})-(\d{2})-(\d{2})$/
/** The API reads full dates with a four-digit year (docs/api.md#from-and-to); the exclusive end must be one too. */
const LAST_YEAR = 9999

export type RangeField = 'from' | 'to'
export interface ReadRange {
  ok: true
  /** From's local midnight, as a UTC instant (inclusive). */
  fromMs: number
  /** The local midnight after To, as a UTC instant (exclusive). */
  toMs: number
  /** The local days From … To. */
  firstDay: DayNumber
  lastDay: DayNumber
  days: number
}
export type Range = ReadRange | { ok: false; field: RangeField; message: string }

/** The quick ranges beside the dates, by the words on their buttons. */
export const PRESETS = {
  yesterday: 'Yesterday',
  'last-7': 'Last 7 days',
  'last-30': 'Last 30 days',
  'this-month': 'This month',
  'last-month': 'Last month',
} as const
export type Preset = keyof typeof PRESETS

/**
 * A quick range in the clock's zone: full days only ("last 7 days" ends yesterday, so no bar is
 * a day still under way), except "this month", which runs to today and so holds a partial day.
 */
export function presetRange(preset: Preset, nowMs: number, clock: LocalClock): { from: string; to: string; firstDay: DayNumber; lastDay: DayNumber } {
  const today = clock.local(nowMs).day
  const [year, month] = dayKey(today).split('-').map(Number) as [number, number]
  const monthStart = (y: number, m: number) => dayNumber(`${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-01`)!
  const [firstDay, lastDay]: [DayNumber, DayNumber] = ({
    yesterday: [today - 1, today - 1],
    'last-7': [today - 7, today - 1],
    'last-30': [today - 30, today - 1],
    'this-month': [monthStart(year, month), today],
    'last-month': [monthStart(month === 1 ? year - 1 : year, month === 1 ? 12 : month - 1), monthStart(year, month) - 1],
  } satisfies Record<Preset, [DayNumber, DayNumber]>)[preset]
  return { from: dayKey(firstDay), to: dayKey(lastDay), firstDay, lastDay }
}

/** The last 30 full days in the clock's zone: today, not over, is left out. */
export function defaultRange(nowMs: number, clock: LocalClock): { from: string; to: string } {
  return presetRange('last-30', nowMs, clock)
}

function readDay(value: string, label: string): { day: DayNumber } | { message: string } {
  if (value === '') return { message: `Choose a ${label} date (the field is empty or not complete).` }
  const parts = DAY_VALUE.exec(value)
  if (!parts) return { message: `The ${label} date "${value}" is not a date.` }
  const year = Number(parts[1])
  if (year > LAST_YEAR) return { message: `The ${label} date is in the year ${year}; the API reads dates up to the year ${LAST_YEAR}.` }
  return { day: dayNumber(value)! }
}

/**
 * Reads the From and To (included) values of date inputs, as local days of `clock`'s zone, into
 * the API's bounds. `maxDays` (the Preview and Download limit) is left out for the charts, whose
 * longer ranges the client splits into windows. On a problem, names the field to fix.
 */
export function readRange(fromValue: string, toValue: string, clock: LocalClock, maxDays: number | null = MAX_DAYS): Range {
  const from = readDay(fromValue, 'From')
  if ('message' in from) return { ok: false, field: 'from', message: from.message }
  const to = readDay(toValue, 'To')
  if ('message' in to) return { ok: false, field: 'to', message: to.message }
  const toMs = clock.startOfDay(to.day + 1)
  if (new Date(toMs).getUTCFullYear() > LAST_YEAR) {
    return { ok: false, field: 'to', message: `The last To date the API can export is ${LAST_YEAR}-12-30 (the file's end is the day after To).` }
  }
  if (to.day < from.day) return { ok: false, field: 'to', message: 'The To date must be on or after the From date.' }
  const days = to.day - from.day + 1
  if (maxDays !== null && days > maxDays) {
    return { ok: false, field: 'to', message: `That range is ${days} days; one file covers at most ${maxDays}. Shorten the range, or download several files.` }
  }
  return { ok: true, fromMs: clock.startOfDay(from.day), toMs, firstDay: from.day, lastDay: to.day, days }
}

const dayFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' })
const dayYearFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })

/** "1 Oct – 30 Oct 2026" for the local days From..To included (the year once when both share it), "20 Nov 2026" for one day. */
export function describeRange({ firstDay, lastDay }: { firstDay: DayNumber; lastDay: DayNumber }): string {
  const [first, last] = [firstDay * 86_400_000, lastDay * 86_400_000]
  if (first === last) return dayYearFormat.format(last)
  const sameYear = new Date(first).getUTCFullYear() === new Date(last).getUTCFullYear()
  return `${(sameYear ? dayFormat : dayYearFormat).format(first)} – ${dayYearFormat.format(last)}`
}
