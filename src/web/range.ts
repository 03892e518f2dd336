// The date range of the form: UTC days, "To" included, turned into the API's [from, to) bounds.

import { MAX_RANGE_DAYS } from '../client/index.ts'

export const MAX_DAYS = MAX_RANGE_DAYS
const DAY_MS = 86_400_000
/** What <input type="date"> gives: a year of four or more digits (Chromium accepts up to 275760). */
const DAY_VALUE = /^(\d{4,})-(\d{2})-(\d{2})$/
/** The API reads full dates with a four-digit year (docs/api.md#from-and-to); the exclusive end must be one too. */
const LAST_YEAR = 9999

export type RangeField = 'from' | 'to'
export type Range = { ok: true; fromMs: number; toMs: number; days: number } | { ok: false; field: RangeField; message: string }

/** A UTC day as YYYY-MM-DD. */
export function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** Today and the 29 days before it, in UTC. */
export function defaultRange(nowMs: number): { from: string; to: string } {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS
  return { from: isoDay(today - 29 * DAY_MS), to: isoDay(today) }
}

function dayStart(value: string, label: string): { ms: number } | { message: string } {
  if (value === '') return { message: `Choose a ${label} date (the field is empty or not complete).` }
  const parts = DAY_VALUE.exec(value)
  if (!parts) return { message: `The ${label} date "${value}" is not a date.` }
  const year = Number(parts[1])
  if (year > LAST_YEAR) return { message: `The ${label} date is in the year ${year}; the API reads dates up to the year ${LAST_YEAR}.` }
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, keeps years 0–99 where they are.
  date.setUTCFullYear(year, Number(parts[2]) - 1, Number(parts[3]))
  return { ms: date.getTime() }
}

/**
 * Reads the From and To (included) values of date inputs into the API's bounds: `fromMs`
 * inclusive, `toMs` exclusive (the day after To). On a problem, names the field to fix.
 */
export function readRange(fromValue: string, toValue: string): Range {
  const from = dayStart(fromValue, 'From')
  if ('message' in from) return { ok: false, field: 'from', message: from.message }
  const to = dayStart(toValue, 'To')
  if ('message' in to) return { ok: false, field: 'to', message: to.message }
  const toMs = to.ms + DAY_MS
  if (new Date(toMs).getUTCFullYear() > LAST_YEAR) {
    return { ok: false, field: 'to', message: `The last To date the API can export is ${LAST_YEAR}-12-30 (the file's end is the day after To).` }
  }
  if (toMs <= from.ms) return { ok: false, field: 'to', message: 'The To date must be on or after the From date.' }
  const days = (toMs - from.ms) / DAY_MS
  if (days > MAX_DAYS) {
    return { ok: false, field: 'to', message: `That range is ${days} days; one file covers at most ${MAX_DAYS}. Shorten the range, or download several files.` }
  }
  return { ok: true, fromMs: from.ms, toMs, days }
}

const dayFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' })
const dayYearFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })

/** "1 Oct – 30 Oct 2026" for the days From..To included (the year once when both share it). */
export function describeRange({ fromMs, toMs }: { fromMs: number; toMs: number }): string {
  const lastDay = toMs - DAY_MS
  const sameYear = new Date(fromMs).getUTCFullYear() === new Date(lastDay).getUTCFullYear()
  return `${(sameYear ? dayFormat : dayYearFormat).format(fromMs)} – ${dayYearFormat.format(lastDay)}`
}
