import { isBusyError, type ControlStore } from '../control/store.ts'

const DAY_MS = 86_400_000

export interface QuotaState {
  allowed: boolean
  limit: number
  /** Requests left today (after this one, when it was counted). */
  remaining: number
  /** Next 00:00:00.000Z, ISO 8601. */
  resetAt: string
  /** Whole seconds, rounded up, until `resetAt`. */
  resetSeconds: number
}

/** The seam for the demo organisations' daily quota. */
export interface DemoQuota {
  /** Counts one request for the organisation today unless the quota is used up. */
  consume(organisationId: string, now: number): Promise<QuotaState>
  /** Today's state without counting (for headers on answers that count nothing). */
  peek(organisationId: string, now: number): QuotaState
}

/**
 * Per organisation, per UTC calendar day, counted in control.sqlite so that the count survives a
 * restart and is shared by every server process on the same data directory.
 */
export class StoredDemoQuota implements DemoQuota {
  constructor(
    private readonly store: ControlStore,
    readonly limit: number,
    /** How long to keep retrying while another process holds the write lock. */
    private readonly lockWaitMs = 10_000,
  ) {}

  /**
   * The increment is one atomic statement. When another process (the admin CLI, another server)
   * holds the write lock, it is retried after short asynchronous waits, so that other requests
   * go on being served meanwhile instead of the event loop blocking in SQLite's busy handler.
   */
  async consume(organisationId: string, now: number): Promise<QuotaState> {
    const giveUpAt = Date.now() + this.lockWaitMs
    for (let attempt = 0; ; attempt++) {
      try {
        const { allowed, used } = this.store.consumeDemoQuota(organisationId, utcDay(now), this.limit)
        return this.state(allowed, used, now)
      } catch (error) {
        if (!isBusyError(error) || Date.now() > giveUpAt) throw error
        await Bun.sleep(Math.min(5 * 2 ** attempt, 100))
      }
    }
  }

  peek(organisationId: string, now: number): QuotaState {
    const used = this.store.demoQuotaUsed(organisationId, utcDay(now))
    return this.state(used < this.limit, used, now)
  }

  private state(allowed: boolean, used: number, now: number): QuotaState {
    const reset = (Math.floor(now / DAY_MS) + 1) * DAY_MS
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - used),
      resetAt: new Date(reset).toISOString(),
      resetSeconds: Math.ceil((reset - now) / 1000),
    }
  }
}

/** YYYY-MM-DD of the UTC day containing `now`. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10)
}
