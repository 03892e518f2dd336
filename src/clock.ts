/** Time source, injected so that rate-limit windows and quotas are tested without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch: the wall clock, which an operator or NTP may step either way. */
  now(): number
  /**
   * Milliseconds from an arbitrary origin that never goes back and never jumps with the wall
   * clock: what durations are measured on (the minute windows).
   */
  monotonic(): number
}

export const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() }

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  private elapsed = 0

  constructor(private current: number = Date.parse('2026-03-10T12:00:00.000Z')) {}
  now(): number {
    return this.current
  }
  monotonic(): number {
    return this.elapsed
  }
  /** Time passes: both clocks move by `ms`. */
  advance(ms: number): void {
    this.current += ms
    this.elapsed += ms
  }
  /** Time passes until the wall clock reads `ms` (both clocks move by the difference). */
  set(ms: number): void {
    this.advance(ms - this.current)
  }
  /** The wall clock is stepped by `ms` (either way), as by an operator or NTP; no time passes. */
  jump(ms: number): void {
    this.current += ms
  }
}
