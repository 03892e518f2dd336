import type { ControlStore } from './store.ts'

/** Where the gate notes each accepted token's use. */
export interface TokenUseNotes {
  note(tokenId: string, at: number): void
  /** Writes what is pending and stops. */
  stop(): void
}

/** READ_ONLY=1: a replica's copy of control.sqlite is not written, so uses are not kept. */
export const notRecorded: TokenUseNotes = { note: () => {}, stop: () => {} }

/**
 * Batches `last used` times in memory and writes them in one short transaction every few
 * seconds, so that a request never waits on a write of the control store for it.
 */
export class LastUsedRecorder implements TokenUseNotes {
  /** Token id → epoch ms of its latest use; formatted only when written. */
  private pending = new Map<string, number>()
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly store: ControlStore,
    private readonly onError: (error: unknown) => void,
    flushEveryMs = 10_000,
  ) {
    this.timer = setInterval(() => this.flush(), flushEveryMs)
    this.timer.unref()
  }

  note(tokenId: string, at: number): void {
    this.pending.set(tokenId, at)
  }

  flush(): void {
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    try {
      this.store.recordTokenUse(new Map([...batch].map(([id, at]) => [id, new Date(at).toISOString()])))
    } catch (error) {
      // Busy or read-only: keep the newest times for the next attempt.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at)
      this.onError(error)
    }
  }

  stop(): void {
    clearInterval(this.timer)
    this.flush()
  }
}
