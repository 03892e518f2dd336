import { ApiError } from '../errors/api-error.ts'

/**
 * How long a refused export is told to wait (`Retry-After`). Exports last seconds to minutes and
 * nothing says when one will end; a refused one costs a look-up in memory and consumes nothing,
 * so a short, fixed wait is cheap for the server and quick for a loader.
 */
export const EXPORT_RETRY_AFTER_SECONDS = 5

export interface ExportSlotLimits {
  /** Exports of one token running at once (EXPORTS_PER_TOKEN). */
  perToken: number
  /** Exports running at once in this process, all tokens together (EXPORTS_MAX). */
  max: number
}

/**
 * The exports running in this process, per token and in all. Every running export holds a
 * connection of its own (three file descriptors), its stream's buffers and, above all, a read
 * snapshot that keeps the writer's WAL from being checkpointed past it (docs/operations.md#exports-and-the-wal),
 * so their number is bounded, not only their starts (the minute window counts starts).
 */
export class ExportSlots {
  private readonly perToken = new Map<string, number>()
  private total = 0

  constructor(private readonly limits: ExportSlotLimits) {}

  /**
   * Takes a slot for one export of `tokenId`, or throws 429 `too_many_exports` with
   * `Retry-After`. The returned function gives the slot back; calling it again does nothing.
   */
  claim(tokenId: string): () => void {
    const running = this.perToken.get(tokenId) ?? 0
    if (running >= this.limits.perToken) {
      throw tooManyExports(`This token already runs ${running} exports, the most allowed at once (${this.limits.perToken}); retry when one has ended.`)
    }
    if (this.total >= this.limits.max) {
      throw tooManyExports(`The server already runs ${this.total} exports, the most it allows at once (${this.limits.max}); retry shortly.`)
    }
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

function tooManyExports(message: string): ApiError {
  return new ApiError('too_many_exports', message, { retryAfter: EXPORT_RETRY_AFTER_SECONDS }, { 'Retry-After': String(EXPORT_RETRY_AFTER_SECONDS) })
}
