/**
 * Parses the `from`/`to` query values (docs/api.md#from-and-to) into epoch milliseconds:
 * an RFC 3339 date-time with `Z` or an offset, or a full date (midnight UTC). A date-time without
 * an offset is ambiguous and refused; `T`/`Z` may be lower case; a space stands for the offset's
 * `+` (a `+` in a query string decodes to a space); fractions finer than a millisecond round up.
 */

const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+\- ])(\d{2}):(\d{2}))$/
const NAIVE_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/

/** The earliest and latest instants the canonical 24-character form can write. */
const MIN_INSTANT = Date.parse('0000-01-01T00:00:00.000Z')
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z')

export type InstantResult = { ok: true; ms: number } | { ok: false; reason: string }

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, does not move years 0–99 into the 1900s.
  date.setUTCFullYear(year, month - 1, day)
  date.setUTCHours(hour, minute, second, ms)
  return date.getTime()
}

export function parseInstant(raw: string): InstantResult {
  const date = FULL_DATE.exec(raw)
  const time = date ? null : DATE_TIME.exec(raw)
  const parts = date ?? time
  if (!parts) {
    if (NAIVE_DATE_TIME.test(raw)) return { ok: false, reason: 'has no UTC offset; add Z or an offset such as +01:00' }
    return { ok: false, reason: 'is not an RFC 3339 date-time (2026-03-01T00:00:00Z) or a date (2026-03-01)' }
  }
  const year = Number(parts[1])
  const month = Number(parts[2])
  const day = Number(parts[3])
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: 'is not a real calendar date' }
  if (!time) return { ok: true, ms: utcMs(year, month, day) }

  const hour = Number(time[4])
  const minute = Number(time[5])
  const second = Number(time[6])
  if (hour > 23 || minute > 59) return { ok: false, reason: 'has an impossible time of day' }
  if (second > 59) return { ok: false, reason: 'has a leap second or an impossible second; use :59' }
  const fraction = time[7] ?? ''
  let ms = Number((fraction + '00').slice(0, 3))
  if (/[1-9]/.test(fraction.slice(3))) ms += 1 // round finer fractions up to the next millisecond

  let offsetMinutes = 0
  if (!time[8]) {
    const offsetHours = Number(time[10])
    const offsetMins = Number(time[11])
    if (offsetHours > 23 || offsetMins > 59) return { ok: false, reason: 'has an impossible UTC offset' }
    offsetMinutes = (time[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const instant = utcMs(year, month, day, hour, minute, second, ms) - offsetMinutes * 60_000
  if (instant < MIN_INSTANT || instant > MAX_INSTANT) return { ok: false, reason: 'is outside the years 0000 to 9999 in UTC' }
  return { ok: true, ms: instant }
}

/** The canonical 24-character UTC form of stored timestamps (YYYY-MM-DDTHH:MM:SS.sssZ). */
export function canonicalInstant(ms: number): string {
  return new Date(ms).toISOString()
}

/** YYYYMMDDTHHMMSSZ, the form used in export file names. */
export function compactInstant(ms: number): string {
  const iso = new Date(ms).toISOString()
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`
}

/**
 * The export's file name for [fromMs, toMs): `tickets_<from>_<to>.csv`, prefixed with `demo-`
 * for a demo organisation (docs/api.md#csv-export). The server names its exports with it, and
 * the client names an export of several windows the same way.
 */
export function exportFileName(fromMs: number, toMs: number, demo: boolean): string {
  return `${demo ? 'demo-' : ''}tickets_${compactInstant(fromMs)}_${compactInstant(toMs)}.csv`
}
