import { quotaState } from '../state.ts'
import type { DemoQuota, QuotaState } from '../types.ts'
import { DEFAULT_KEY_PREFIX, type ScriptRunner } from './connection.ts'
import { PROBE_SCRIPT, QUOTA_SCRIPT } from './scripts.ts'

/**
 * The demo quota in Redis: one counter per organisation per UTC day (the day by Redis's clock),
 * expiring at the end of its day, shared by every process that uses the same Redis. The gate
 * asks it only after the minute window passed, so a request refused by the window counts here
 * for nothing. Every call may throw: the gate answers 503.
 */
export class RedisDemoQuota implements DemoQuota {
  readonly backend = 'redis'
  private readonly keyPrefix: string

  constructor(
    private readonly redis: ScriptRunner,
    private readonly options: { limit: number; keyPrefix?: string },
  ) {
    this.keyPrefix = `${options.keyPrefix ?? DEFAULT_KEY_PREFIX}quota:`
  }

  consume(organisationId: string): Promise<QuotaState> {
    return this.call('consume', organisationId)
  }

  peek(organisationId: string): Promise<QuotaState> {
    return this.call('peek', organisationId)
  }

  async release(organisationId: string, counted: QuotaState): Promise<QuotaState> {
    // The day by number, as the script names its key: the consume's day, whatever Redis's clock says now.
    const day = Math.floor((Date.parse(counted.resetAt) - 86_400_000) / 86_400_000)
    return this.call('release', organisationId, day)
  }

  /** Resolves when Redis runs the limits' scripts (see PROBE_SCRIPT). */
  async ping(): Promise<void> {
    await this.redis.run(PROBE_SCRIPT, [], [])
  }

  async close(): Promise<void> {
    this.redis.close()
  }

  private async call(mode: 'consume' | 'peek' | 'release', organisationId: string, day?: number): Promise<QuotaState> {
    const { limit } = this.options
    const [allowed, used, now] = await this.redis.run(QUOTA_SCRIPT, [this.keyPrefix + organisationId], [mode, String(limit), String(day ?? '')], { lateIsHarmless: mode === 'release' })
    // Redis's clock, not this process's: resetAt is the midnight the counter expires at.
    const dayOf = day === undefined ? undefined : new Date(day * 86_400_000).toISOString().slice(0, 10)
    return quotaState(limit, Number(used), allowed === 1, Number(now), dayOf)
  }
}
