// Time zones on the page: the analyst's days are local days of an IANA zone, while the API
// speaks UTC instants. A local day starts at that zone's midnight, which is a different UTC
// instant for every zone and, on the days the clocks change, lasts 23 or 25 hours. Pure
// functions on Intl, so the page and its worker share them. Zone names are checked and spelled
// by src/contract/time-zone.ts, as the API serves a location's zone: `Asia/Kolkata`, although
// Chromium's Intl says `Asia/Calcutta`; `IST` refused, naming the zones it may mean.

import { canonicalZoneName, checkZone, RENAMED_ZONES, type ZoneCheck } from '../contract/time-zone.ts'

const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

/** The browser's own zone (what the page uses until the analyst picks another), by its current IANA name. */
export function browserTimeZone(): string {
  const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone
  return canonicalZoneName(resolved) ?? resolved
}

/** The zone's one name when the browser knows it (`europe/amsterdam` → `Europe/Amsterdam`, `Asia/Calcutta` → `Asia/Kolkata`), else null. */
export function canonicalTimeZone(name: string): string | null {
  return canonicalZoneName(name)
}

/**
 * The zone the analyst typed, by its one name, or null: an unknown name, an ambiguous
 * abbreviation (`IST`), an offset. checkTypedZone says why.
 */
export function zoneAsTyped(name: string): string | null {
  return canonicalZoneName(name)
}

/** The zone the analyst typed, or why it is refused (naming the zones an abbreviation may mean). */
export function checkTypedZone(name: string): ZoneCheck {
  return checkZone(name)
}

/** Every IANA zone the browser knows, by current names (Chromium lists `Asia/Calcutta`), for the control's suggestions. */
export function knownTimeZones(): string[] {
  const listed = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  const zones = [...new Set(listed.map((zone) => RENAMED_ZONES[zone] ?? zone))].sort()
  return zones.includes('UTC') ? zones : ['UTC', ...zones]
}

/**
 * The offset of `zone` from UTC at one instant, in ms (local wall time − UTC), read from Intl.
 * Called once per hour of the range by LocalClock, not once per row.
 */
function offsetAt(format: Intl.DateTimeFormat, instantMs: number): number {
  const parts: Record<string, number> = {}
  for (const part of format.formatToParts(instantMs)) if (part.type !== 'literal' && part.type !== 'era') parts[part.type] = Number(part.value)
  const wall = new Date(0)
  wall.setUTCFullYear(parts.year!, parts.month! - 1, parts.day!)
  wall.setUTCHours(parts.hour!, parts.minute!, parts.second!, 0)
  return wall.getTime() - (instantMs - (((instantMs % 1000) + 1000) % 1000))
}

function formatFor(zone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  })
}

/** A local day as its days since 1970-01-01 (the local calendar's day number). */
export type DayNumber = number

/** YYYY-MM-DD of a day number. */
export function dayKey(day: DayNumber): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/** The day number of YYYY-MM-DD (a year of four digits), or null. */
export function dayNumber(value: string): DayNumber | null {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!parts) return null
  const date = new Date(0)
  date.setUTCFullYear(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3]))
  return Math.round(date.getTime() / DAY_MS)
}

/** Monday 0 … Sunday 6 of a day number (1970-01-01 was a Thursday). */
export function weekday(day: DayNumber): number {
  return (((day + 3) % 7) + 7) % 7
}

/**
 * The clock of one zone: where an instant falls locally, and where a local day starts. The
 * offset is looked up once per UTC hour and kept (zones change offset on whole or half hours,
 * so an hour whose two ends differ is computed row by row).
 */
export class LocalClock {
  private readonly format: Intl.DateTimeFormat
  private readonly hourOffsets = new Map<number, number | null>()

  constructor(readonly zone: string) {
    this.format = formatFor(zone)
  }

  offset(instantMs: number): number {
    const hour = Math.floor(instantMs / HOUR_MS)
    let known = this.hourOffsets.get(hour)
    if (known === undefined) {
      const start = offsetAt(this.format, hour * HOUR_MS)
      known = start === offsetAt(this.format, hour * HOUR_MS + HOUR_MS - 1000) ? start : null
      this.hourOffsets.set(hour, known)
    }
    return known ?? offsetAt(this.format, instantMs)
  }

  /** The local day number and hour of day (0–23) of an instant. */
  local(instantMs: number): { day: DayNumber; hour: number } {
    const wall = instantMs + this.offset(instantMs)
    const day = Math.floor(wall / DAY_MS)
    return { day, hour: Math.floor((wall - day * DAY_MS) / HOUR_MS) }
  }

  /**
   * The first instant of a local day: its midnight as a UTC instant, or, in a zone whose clocks
   * jump over midnight, the first instant that day has. Found by bisection between bounds no
   * zone's offset exceeds, since an instant's local day never goes down as the instant grows
   * (outside a clock moved back across midnight, where the first instant is taken).
   */
  startOfDay(day: DayNumber): number {
    let low = day * DAY_MS - 15 * HOUR_MS // UTC+14 is the largest offset in use
    let high = day * DAY_MS + 13 * HOUR_MS // UTC−12 the smallest
    while (high - low > 1000) {
      const middle = Math.floor((low + high) / 2000) * 1000
      if (this.local(middle).day >= day) high = middle
      else low = middle
    }
    return high
  }

  /** How many hours a local day has: 24, or 23 and 25 on the days the clocks change. */
  hoursIn(day: DayNumber): number {
    return Math.round((this.startOfDay(day + 1) - this.startOfDay(day)) / HOUR_MS)
  }
}

/**
 * `YYYY-MM-DD HH:MM:SS`, the wall-clock time of instants in the clock's zone (a form spreadsheets
 * read as a date). Many in a row, as a file's rows: written as bytes, the day's part made once
 * per local day, no Date or string per instant.
 */
export class LocalTimestamps {
  private day = Number.NaN
  private readonly dayBytes = new Uint8Array(11)

  constructor(private readonly clock: LocalClock) {}

  /** Writes the 19 bytes at `at` of `into`; returns the offset after them (`at` for an instant that is not one). */
  writeInto(into: Uint8Array, at: number, instantMs: number): number {
    if (!Number.isFinite(instantMs)) return at
    const wall = instantMs + this.clock.offset(instantMs)
    const day = Math.floor(wall / DAY_MS)
    if (day !== this.day) {
      this.day = day
      const key = `${dayKey(day)} `
      for (let i = 0; i < 11; i++) this.dayBytes[i] = key.charCodeAt(i)
    }
    into.set(this.dayBytes, at)
    const seconds = Math.floor((wall - day * DAY_MS) / 1000)
    const put = (offset: number, value: number) => {
      into[offset] = 0x30 + Math.floor(value / 10)
      into[offset + 1] = 0x30 + (value % 10)
    }
    put(at + 11, Math.floor(seconds / 3600))
    into[at + 13] = 0x3a
    put(at + 14, Math.floor(seconds / 60) % 60)
    into[at + 16] = 0x3a
    put(at + 17, seconds % 60)
    return at + 19
  }

  /** The same as text ('' for an instant that is not one). */
  format(instantMs: number): string {
    const bytes = new Uint8Array(19)
    return String.fromCharCode(...bytes.subarray(0, this.writeInto(bytes, 0, instantMs)))
  }
}

/** One instant as LocalTimestamps writes it. */
export function localTimestamp(instantMs: number, clock: LocalClock): string {
  return new LocalTimestamps(clock).format(instantMs)
}

/** "UTC+13:00" for a zone's offset at an instant. */
export function describeOffset(offsetMs: number): string {
  const minutes = Math.round(offsetMs / 60_000)
  const sign = minutes < 0 ? '−' : '+'
  const abs = Math.abs(minutes)
  return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
}
