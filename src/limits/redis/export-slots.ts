import { tooManyForToken, tooManyInAll, type ExportSlotLimits, type ExportSlots } from '../export-slots.ts'
import { DEFAULT_KEY_PREFIX, type ScriptRunner } from './connection.ts'
import { CLAIM_EXPORT_SCRIPT, REFRESH_EXPORT_SCRIPT, RELEASE_EXPORT_SCRIPT, memberIds } from './scripts.ts'

export interface RedisExportSlotsOptions extends ExportSlotLimits {
  /** Prefix of every key, so that the limits can share a Redis with other data. @default DEFAULT_KEY_PREFIX */
  keyPrefix?: string
  /** How long a slot stays taken after its holder last refreshed it. @default 30000 */
  holdMs?: number
  /** How often a running export refreshes its slot. @default a third of holdMs */
  refreshEveryMs?: number
}

/**
 * The exports running at once in Redis, shared by every process that uses the same Redis, so
 * that `WORKERS=N` still runs at most EXPORTS_PER_TOKEN exports of one token and EXPORTS_MAX in
 * all (see CLAIM_EXPORT_SCRIPT). A slot expires `holdMs` after its holder last refreshed it:
 * while the export runs a timer refreshes it, so only a holder that died (or lost Redis for
 * that long) loses it. A claim may throw (Redis unreachable, slow or failing): the gate answers
 * 503. Refreshes and give-backs are not awaited by the export; one that fails leaves the slot to
 * expire within `holdMs`.
 */
export class RedisExportSlots implements ExportSlots {
  readonly backend = 'redis'
  private readonly keyPrefix: string
  private readonly holdMs: number
  private readonly refreshEveryMs: number
  /** One member per export, unique across processes. */
  private readonly nextMember = memberIds()

  constructor(
    private readonly redis: ScriptRunner,
    private readonly options: RedisExportSlotsOptions,
  ) {
    this.keyPrefix = `${options.keyPrefix ?? DEFAULT_KEY_PREFIX}exports:`
    this.holdMs = options.holdMs ?? 30_000
    this.refreshEveryMs = options.refreshEveryMs ?? Math.floor(this.holdMs / 3)
  }

  async claim(tokenId: string): Promise<() => void> {
    const member = this.nextMember()
    const keys = [`${this.keyPrefix}token:${tokenId}`, `${this.keyPrefix}all`]
    const { perToken, max } = this.options
    const [outcome, running] = await this.redis.run(CLAIM_EXPORT_SCRIPT, keys, [String(perToken), String(max), String(this.holdMs), member])
    if (outcome === 'token') throw tooManyForToken(Number(running), perToken)
    if (outcome === 'all') throw tooManyInAll(Number(running), max)
    if (outcome !== 'ok') throw new Error(`unexpected answer from the export slots script: ${String(outcome)}`)

    // A failed refresh is retried at the next tick; the slot expires only if they all fail.
    const refresh = setInterval(() => {
      this.redis.run(REFRESH_EXPORT_SCRIPT, keys, [String(this.holdMs), member]).catch(() => undefined)
    }, this.refreshEveryMs)
    refresh.unref()
    let held = true
    return () => {
      if (!held) return
      held = false
      clearInterval(refresh)
      this.redis.run(RELEASE_EXPORT_SCRIPT, keys, [member], { lateIsHarmless: true }).catch(() => undefined)
    }
  }
}
