import { ApiError } from '../errors/api-error.ts'

/**
 * How long a refused export is told to wait (`Retry-After`). Exports last seconds to minutes and
 * nothing says when one will end; a refused one costs one look-up and consumes nothing, so a
 * short, fixed wait is cheap for the server and quick for a loader.
 */
export const EXPORT_RETRY_AFTER_SECONDS = 5

export interface ExportSlotLimits {
  /** Exports of one token running at once (EXPORTS_PER_TOKEN). */
  perToken: number
  /** Exports running at once, all tokens together (EXPORTS_MAX). */
  max: number
}

/**
 * The seam of the exports running at once (docs/api.md#exports-running-at-once). Every running
 * export holds a connection of its own (three file descriptors), its stream's buffers and, above
 * all, a read snapshot that keeps the writer's WAL from being checkpointed past it
 * (docs/operations.md#exports-and-the-wal), so their number is bounded, not only their starts
 * (the minute window counts starts). Two engines: in this process's memory (MemoryExportSlots)
 * or in Redis, shared by every process using it (RedisExportSlots); both pass
 * test/support/export-slots-suite.ts.
 */
export interface ExportSlots {
  /** Where the slots are kept (a LimitsBackend of src/limits/types.ts). */
  readonly backend: string
  /**
   * Takes a slot for one export of `tokenId`, or rejects with 429 `too_many_exports` (an
   * ApiError, with `Retry-After`); a refused claim takes nothing. Any other rejection means the
   * engine cannot be reached (the gate answers 503 limits_unavailable). The resolved function
   * gives the slot back; calling it again does nothing.
   */
  claim(tokenId: string): Promise<() => void>
}

/** The exports running in this process, per token and in all: the engine without `REDIS_URL`. */
export class MemoryExportSlots implements ExportSlots {
  readonly backend = 'memory'
  private readonly perToken = new Map<string, number>()
  private total = 0

  constructor(private readonly limits: ExportSlotLimits) {}

  async claim(tokenId: string): Promise<() => void> {
    const running = this.perToken.get(tokenId) ?? 0
    if (running >= this.limits.perToken) throw tooManyForToken(running, this.limits.perToken)
    if (this.total >= this.limits.max) throw tooManyInAll(this.total, this.limits.max)
    this.perToken.set(tokenId, running + 1)
    this.total++
    let held = true
    return () => {
      if (!held) return
      held = false
      this.total--
      const left = this.perToken.get(tokenId)! - 1
      if (left === 0) this.perToken.delete(tokenId)
      else this.perToken.set(tokenId, left)
    }
  }

  /** Exports running now: in all, or of one token. */
  running(tokenId?: string): number {
    return tokenId === undefined ? this.total : (this.perToken.get(tokenId) ?? 0)
  }
}

export function tooManyForToken(running: number, limit: number): ApiError {
  return tooManyExports(`This token already runs ${running} exports, the most allowed at once (${limit}); retry when one has ended.`)
}

export function tooManyInAll(running: number, limit: number): ApiError {
  return tooManyExports(`The server already runs ${running} exports, the most it allows at once (${limit}); retry shortly.`)
}

function tooManyExports(message: string): ApiError {
  return new ApiError('too_many_exports', message, { retryAfter: EXPORT_RETRY_AFTER_SECONDS }, { 'Retry-After': String(EXPORT_RETRY_AFTER_SECONDS) })
}
