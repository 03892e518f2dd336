import type { Clock } from '../clock.ts'
import { countedDecision } from './state.ts'
import type { RateLimiter, WindowDecision, WindowState } from './types.ts'
import { SlidingWindowLog } from './sliding-window.ts'

/**
 * The embedded default: every token's window in this process's memory. One process only: a
 * second process would keep windows of its own (see docs/operations.md#running-more-than-one-process).
 * JavaScript runs one request's check to completion, so peek-then-record here is atomic.
 * Windows are durations, so they run on the clock's monotonic time: a step of the wall clock
 * back would otherwise keep every counted request in the window (a token locked out for the
 * step's length), and a step forward would empty it (a new window handed out early).
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly backend = 'memory'
  readonly windowSeconds: number
  private readonly log: SlidingWindowLog
  private readonly clock: Clock

  constructor(options: { limit: number; windowMs?: number; clock: Clock }) {
    const windowMs = options.windowMs ?? 60_000
    this.log = new SlidingWindowLog(options.limit, windowMs)
    this.windowSeconds = windowMs / 1000
    this.clock = options.clock
  }

  async consume(key: string): Promise<WindowDecision> {
    const now = this.clock.monotonic()
    const peeked = this.log.peek(key, now)
    if (!peeked.allowed) return { state: peeked }
    const state = this.log.record(key, now)
    return countedDecision(
      state,
      async () => {
        this.log.release(key, now)
        return this.log.peek(key, this.clock.monotonic())
      },
      () => this.peek(key),
    )
  }

  async peek(key: string): Promise<WindowState> {
    return this.log.peek(key, this.clock.monotonic())
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  /** Tokens with state; for tests. */
  get size(): number {
    return this.log.size
  }
}
