import type { Clock } from '../clock.ts'
import { isBusyError, type ControlStore } from '../control/store.ts'
import { QuotaRetention } from './quota-retention.ts'
import { countedDay, DAY_MS, quotaState, utcDay } from './state.ts'
import type { DemoQuota, QuotaState } from './types.ts'

/**
 * The embedded default: counters in control.sqlite, so that they survive a restart and are
 * shared by every process on the same data directory. Old days' counters are pruned once
 * QuotaRetention says no clock step can bring their day back.
 */
export class StoredDemoQuota implements DemoQuota {
  readonly backend = 'control.sqlite'
  private prunedBefore = ''
  private readonly retention: QuotaRetention
  /** Whether the last write failed: ping then checks that control.sqlite takes writes again. */
  private failing = false
  /** The newest day counted on (here or, read once, by any process); undefined until read. */
  private latestDay: string | undefined

  constructor(
    private readonly store: ControlStore,
    readonly limit: number,
    private readonly clock: Clock,
    /** How long to keep retrying while another process holds the write lock. */
    private readonly lockWaitMs = 10_000,
  ) {
    this.retention = new QuotaRetention(() => clock.monotonic())
  }

  /**
   * The increment is one atomic statement. When another process (the admin CLI, another server)
   * holds the write lock, it is retried after short asynchronous waits, so that other requests
   * go on being served meanwhile instead of the event loop blocking in SQLite's busy handler.
   */
  async consume(organisationId: string): Promise<QuotaState> {
    const now = this.clock.now()
    const day = this.today(now)
    // On the clock's monotonic time: a wall clock stepped meanwhile neither cuts the wait short nor stretches it.
    const giveUpAt = this.clock.monotonic() + this.lockWaitMs
    for (let attempt = 0; ; attempt++) {
      try {
        const { allowed, used } = this.store.consumeDemoQuota(organisationId, day, this.limit)
        this.failing = false
        this.retention.counted(day)
        this.pruneBefore(this.retention.keptFrom(day))
        return quotaState(this.limit, used, allowed, now, day)
      } catch (error) {
        if (!isBusyError(error) || this.clock.monotonic() > giveUpAt) {
          this.failing = true
          throw error
        }
        await Bun.sleep(Math.min(5 * 2 ** attempt, 100))
      }
    }
  }

  async release(organisationId: string, counted: QuotaState): Promise<QuotaState> {
    const day = countedDay(counted)
    const used = this.store.releaseDemoQuota(organisationId, day)
    return quotaState(this.limit, used, used < this.limit, this.clock.now(), day)
  }

  async peek(organisationId: string): Promise<QuotaState> {
    const now = this.clock.now()
    const day = this.today(now)
    const used = this.store.demoQuotaUsed(organisationId, day)
    return quotaState(this.limit, used, used < this.limit, now, day)
  }

  /**
   * The day counted on: the wall clock's UTC day, but never one before a day already counted on.
   * A wall clock stepped back across midnight would otherwise find yesterday's counters pruned
   * and hand out that day's quota a second time; instead the newer day goes on until the wall
   * clock reaches its end (its resetAt is then more than a day ahead, which is the truth).
   * A counted day more than a day ahead of the wall clock was made by a clock set wrong (a
   * step back is a correction of at most a leap or a drift, not of days): following it would
   * give one quota for all the days until then, so the wall clock's day is taken instead.
   */
  private today(now: number): string {
    this.latestDay ??= this.store.latestDemoQuotaDay()
    const day = utcDay(now)
    if (day > this.latestDay || this.latestDay > utcDay(now + DAY_MS)) this.latestDay = day
    return this.latestDay
  }

  /**
   * Resolves at once while writes succeed (a request finds out when they stop); after a failed
   * one, only once a write commits again, so that the limits' probe never reports a store that
   * still refuses writes as recovered.
   */
  async ping(): Promise<void> {
    if (!this.failing) return
    this.store.checkWritable()
    this.failing = false
  }

  async close(): Promise<void> {}

  private pruneBefore(day: string): void {
    if (this.prunedBefore === day) return
    try {
      this.store.pruneDemoQuota(day)
      this.prunedBefore = day
    } catch (error) {
      // Another process holds the lock: the old rows wait for the next request.
      if (!isBusyError(error)) throw error
    }
  }
}
