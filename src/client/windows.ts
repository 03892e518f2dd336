import { MAX_RANGE_MS } from '../contract/vocabulary.ts'

/** A range of creation times, `to` exclusive, as epoch milliseconds. */
export interface Window {
  fromMs: number
  toMs: number
}

/**
 * Splits [from, to) into consecutive windows of at most 90 days (the API's longest range), in
 * order. Each window starts where the previous one ends and `to` is exclusive, so no ticket can
 * fall in two windows or in none.
 */
export function splitIntoWindows(fromMs: number, toMs: number, maxMs = MAX_RANGE_MS): Window[] {
  const windows: Window[] = []
  for (let start = fromMs; start < toMs; start += maxMs) windows.push({ fromMs: start, toMs: Math.min(toMs, start + maxMs) })
  return windows
}

/**
 * An instant given as a Date, epoch milliseconds, or a string in a form the API accepts: an
 * RFC 3339 date-time with `Z` or an offset, or a date (midnight UTC). Throws a RangeError
 * naming the parameter otherwise: a range must be split here, so it is read here.
 */
export function toInstant(value: Date | number | string, name: string): number {
  let ms: number
  if (value instanceof Date) ms = value.getTime()
  else if (typeof value === 'number') ms = value
  else if (/^\d{4}-\d{2}-\d{2}$/.test(value)) ms = Date.parse(`${value}T00:00:00.000Z`)
  else if (/^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) ms = Date.parse(value)
  else ms = NaN
  if (!Number.isFinite(ms)) throw new RangeError(`${name} must be a Date, epoch milliseconds, a date (2026-03-01) or an RFC 3339 date-time with Z or an offset; got ${String(value)}`)
  return ms
}
