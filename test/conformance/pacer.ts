/** Time as the suite sees it: real for a deployment, a manual clock for the in-process runner. */
export interface SuiteClock {
  now(): number
  sleep(ms: number): Promise<void>
}

/** The contract's per-token limit: the suite never plans on more, whatever a server advertises. */
export const CONTRACT_PER_MINUTE = 60
export const WINDOW_MS = 60_000
/** Waiting this much longer than computed absorbs the clocks' and the network's small differences. */
const MARGIN_MS = 250

/**
 * Keeps one token's requests inside its minute window, so that the suite's own checks are never
 * answered 429 and a deployment's other clients are not starved. It remembers when it sent each
 * request (exact for its own traffic) and reads the server's X-RateLimit-* after each answer
 * (which also shows what others spent with the same token). When either says the window is
 * full, it waits until its oldest request leaves the window, or, when none of its own is in it,
 * for the server's X-RateLimit-Reset.
 */
export class Pacer {
  private sent: number[] = []
  private limit = CONTRACT_PER_MINUTE
  /** What the server said is left after its last answer; null when unknown. */
  private serverRemaining: number | null = null
  private serverEmptyAt = 0

  constructor(
    private readonly clock: SuiteClock,
    /** Told about each wait longer than a second, so that a slow run explains itself. */
    private readonly onWait: (ms: number) => void = () => undefined,
  ) {}

  /**
   * Waits, if needed, until one more request fits in the window; then counts it as sent.
   * `wait: false` only counts it (a check that means to exceed the window).
   */
  async beforeRequest({ wait = true }: { wait?: boolean } = {}): Promise<void> {
    while (wait && this.full()) {
      const now = this.clock.now()
      const until = this.sent.length > 0 ? this.sent[0]! + WINDOW_MS : Math.max(this.serverEmptyAt, now)
      const ms = until - now + MARGIN_MS
      if (ms > 1000) this.onWait(ms)
      await this.clock.sleep(ms)
      // A slot has left the window since the server last spoke; its next answer tells again.
      this.serverRemaining = null
    }
    this.sent.push(this.clock.now())
  }

  /** Whether the window is full by our own count or by the server's last word. */
  private full(): boolean {
    const now = this.clock.now()
    while (this.sent.length > 0 && this.sent[0]! <= now - WINDOW_MS) this.sent.shift()
    return this.sent.length >= this.limit || (this.serverRemaining !== null && this.serverRemaining <= 0)
  }

  /** Reads the window from an answer's headers; answers without them (401, 404) change nothing. */
  afterResponse(headers: Headers): void {
    const limit = integer(headers.get('x-ratelimit-limit'))
    const remaining = integer(headers.get('x-ratelimit-remaining'))
    const reset = integer(headers.get('x-ratelimit-reset'))
    if (limit !== null && limit > 0) this.limit = Math.min(limit, CONTRACT_PER_MINUTE)
    if (remaining !== null) this.serverRemaining = remaining
    if (reset !== null) this.serverEmptyAt = this.clock.now() + reset * 1000
  }
}

function integer(value: string | null): number | null {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null
}
