import { MAX_RANGE_MS } from '../contract/vocabulary.ts'
import { parseInstant } from '../contract/instant.ts'

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
 * An instant given as a Date, epoch milliseconds, or a string read exactly as the API reads
 * `from` and `to` (the same parser): an RFC 3339 date-time with `Z` or an offset, or a date
 * (midnight UTC). Throws a RangeError naming the parameter otherwise: a range must be split
 * here, so it is read here.
 */
export function toInstant(value: Date | number | string, name: string): number {
  if (value instanceof Date || typeof value === 'number') {
    const ms = value instanceof Date ? value.getTime() : value
    if (!Number.isFinite(ms)) throw new RangeError(`${name} is not a valid instant`)
    return ms
  }
  const parsed = parseInstant(String(value))
  if (!parsed.ok) throw new RangeError(`${name} ${parsed.reason}; got ${String(value).slice(0, 40)}`)
  return parsed.ms
}
