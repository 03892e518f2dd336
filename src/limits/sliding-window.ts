import type { WindowState } from './types.ts'
import { describeWindow } from './state.ts'

/**
 * Exact sliding-window log, in memory, with time passed in: at most `limit` counted requests per
 * key in any interval of `windowMs`. Each key keeps the times of its counted requests still
 * inside the window (at most `limit` live ones, in an array at most about twice that; O(1) work
 * per request on average: see RequestTimes); keys idle for a whole window are dropped by
 * `sweep`, so memory follows the keys active in the last window, not every key ever seen.
 * MemoryRateLimiter puts it behind the asynchronous RateLimiter seam.
 */

/**
 * One key's counted request times, ascending. Expired times leave by moving a head index, not by
 * `splice(0, n)`, which moves every remaining time (docs/decisions/0011-limits-seam.md); the
 * array is compacted once half of it is dead, so each time is copied O(1) times on average.
 */
class RequestTimes {
  private times: number[] = []
  private head = 0

  get count(): number {
    return this.times.length - this.head
  }

  get newest(): number | undefined {
    return this.count === 0 ? undefined : this.times[this.times.length - 1]
  }

  /** The `index`-th live time, oldest first. */
  at(index: number): number {
    return this.times[this.head + index]!
  }

  push(time: number): void {
    this.times.push(time)
  }

  /** Drops the times at or before `horizon`. */
  expire(horizon: number): void {
    const { times } = this
    let head = this.head
    while (head < times.length && times[head]! <= horizon) head++
    if (head === times.length) {
      this.times = []
      this.head = 0
    } else if (head >= 32 && head * 2 >= times.length) {
      // Not below 32 dead times: a small window would otherwise be copied on almost every request.
      this.times = times.slice(head)
      this.head = 0
    } else {
      this.head = head
    }
  }

  /** Removes one occurrence of `time`, the newest; false when none is live. */
  remove(time: number): boolean {
    const index = this.times.lastIndexOf(time)
    if (index < this.head) return false
    this.times.splice(index, 1)
    return true
  }
}

export class SlidingWindowLog {
  private readonly windows = new Map<string, RequestTimes>()
  private lastSweep = -Infinity

  constructor(
    readonly limit: number,
    readonly windowMs: number = 60_000,
  ) {}

  peek(key: string, now: number): WindowState {
    this.maybeSweep(now)
    return this.describe(this.live(key, now), now)
  }

  record(key: string, now: number): WindowState {
    let times = this.live(key, now)
    if (!times) {
      times = new RequestTimes()
      this.windows.set(key, times)
    }
    times.push(now)
    return this.describe(times, now)
  }

  /**
   * Takes back one request counted at `at`. Two requests counted in the same millisecond hold
   * equal times, so removing either leaves the same window.
   */
  release(key: string, at: number): void {
    const times = this.windows.get(key)
    if (times?.remove(at) && times.count === 0) this.windows.delete(key)
  }

  /** Keys with state; for tests and metrics. */
  get size(): number {
    return this.windows.size
  }

  /** Drops every key whose requests have all left the window. */
  sweep(now: number): void {
    this.lastSweep = now
    const horizon = now - this.windowMs
    // A kept key always holds at least one time: `live` and `release` delete a key left empty.
    for (const [key, times] of this.windows) {
      if (times.newest! <= horizon) this.windows.delete(key)
    }
  }

  /** The key's live times, expired ones dropped (undefined when none are left). */
  private live(key: string, now: number): RequestTimes | undefined {
    const times = this.windows.get(key)
    if (!times) return undefined
    times.expire(now - this.windowMs)
    if (times.count === 0) {
      this.windows.delete(key)
      return undefined
    }
    return times
  }

  private describe(times: RequestTimes | undefined, now: number): WindowState {
    const count = times?.count ?? 0
    return describeWindow({
      limit: this.limit,
      windowMs: this.windowMs,
      now,
      count,
      newest: times?.newest,
      // The request that must leave the window before one more fits: the limit-th most recent.
      blocking: count < this.limit ? undefined : times!.at(count - this.limit),
    })
  }

  /** Sweeping is amortised: at most once per window of time, from whichever request comes first. */
  private maybeSweep(now: number): void {
    if (now - this.lastSweep >= this.windowMs) this.sweep(now)
  }
}
