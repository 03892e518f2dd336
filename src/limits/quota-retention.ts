import { DAY_MS, utcDay } from './state.ts'

/** What a process keeps before it has run a day: it cannot know when older days were counted on. */
const DAYS_KEPT_AT_START = 31

/**
 * Which demo-quota days may be forgotten, judged by the process's monotonic clock, never by the
 * wall clock alone: a wall clock stepped ahead and put right would otherwise have the real
 * day's counters pruned while it was ahead, and the day handed out a second time once it is
 * back. A day is kept while it is the day counted on, and for a day of the process's own time
 * after it was last counted on; a process that has not run a day yet also keeps the
 * DAYS_KEPT_AT_START days before the one counted on, which bounds what a restart during a step
 * can lose.
 */
export class QuotaRetention {
  /** Each day this process counted on, with the monotonic time it last did. */
  private readonly lastCountedAt = new Map<string, number>()
  private readonly startedAt: number

  constructor(private readonly monotonic: () => number) {
    this.startedAt = monotonic()
  }

  /** A request was counted on `day`. */
  counted(day: string): void {
    this.lastCountedAt.set(day, this.monotonic())
  }

  /** The oldest day still kept while `today` is the day counted on: every older day may be pruned. */
  keptFrom(today: string): string {
    const now = this.monotonic()
    let oldest = today
    for (const [day, at] of this.lastCountedAt) {
      if (now - at >= DAY_MS) this.lastCountedAt.delete(day)
      else if (day < oldest) oldest = day
    }
    if (now - this.startedAt < DAY_MS) {
      const horizon = utcDay(Date.parse(`${today}T00:00:00.000Z`) - DAYS_KEPT_AT_START * DAY_MS)
      if (horizon < oldest) oldest = horizon
    }
    return oldest
  }
}
