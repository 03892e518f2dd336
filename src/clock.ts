/** Time source, injected so that rate-limit windows and quotas are tested without sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.parse('2026-03-10T12:00:00.000Z')) {}
  now(): number {
    return this.current
  }
  advance(ms: number): void {
    this.current += ms
  }
  set(ms: number): void {
    this.current = ms
  }
}
