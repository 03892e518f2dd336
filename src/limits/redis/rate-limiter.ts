import { countedDecision, describeWindow } from '../state.ts'
import type { RateLimiter, WindowDecision, WindowState } from '../types.ts'
import { DEFAULT_KEY_PREFIX, type ScriptRunner } from './connection.ts'
import { PROBE_SCRIPT, WINDOW_SCRIPT, memberIds } from './scripts.ts'

export interface RedisRateLimiterOptions {
  limit: number
  /** @default 60000 (tests use a short window: Redis's clock cannot be faked) */
  windowMs?: number
  /** Prefix of every key, so that the limits can share a Redis with other data. @default DEFAULT_KEY_PREFIX */
  keyPrefix?: string
}

/**
 * The minute window in Redis, shared by every process that uses the same Redis: an exact
 * sliding log per token (see WINDOW_SCRIPT), the state computed by the same function as the
 * in-memory default's, so that both give the same headers for the same requests.
 * Every call may throw (Redis unreachable, slow or failing): the gate answers 503.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly backend = 'redis'
  readonly windowSeconds: number
  private readonly limit: number
  private readonly windowMs: number
  private readonly keyPrefix: string
  /** One member per request, unique across processes. */
  private readonly nextMember = memberIds()

  constructor(
    private readonly redis: ScriptRunner,
    options: RedisRateLimiterOptions,
  ) {
    this.limit = options.limit
    this.windowMs = options.windowMs ?? 60_000
    this.windowSeconds = this.windowMs / 1000
    this.keyPrefix = `${options.keyPrefix ?? DEFAULT_KEY_PREFIX}window:`
  }

  async consume(key: string): Promise<WindowDecision> {
    const member = this.nextMember()
    const [counted, state] = await this.call('consume', key, member)
    if (!counted) return { state }
    return countedDecision(state, async () => (await this.call('release', key, member))[1], () => this.peek(key))
  }

  async peek(key: string): Promise<WindowState> {
    return (await this.call('peek', key, ''))[1]
  }

  /** Resolves when Redis runs the limits' scripts (see PROBE_SCRIPT). */
  async ping(): Promise<void> {
    await this.redis.run(PROBE_SCRIPT, [], [])
  }

  async close(): Promise<void> {
    this.redis.close()
  }

  private async call(mode: 'consume' | 'peek' | 'release', key: string, member: string): Promise<[boolean, WindowState]> {
    const args = [mode, String(this.limit), String(this.windowMs), member]
    const [counted, count, now, newest, blocking] = await this.redis.run(WINDOW_SCRIPT, [this.keyPrefix + key], args, { lateIsHarmless: mode === 'release' })
    const state = describeWindow({
      limit: this.limit,
      windowMs: this.windowMs,
      now: Number(now),
      count: Number(count),
      newest: newest == null ? undefined : Number(newest),
      blocking: blocking == null ? undefined : Number(blocking),
    })
    return [counted === 1, state]
  }
}
