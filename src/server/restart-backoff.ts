/** A worker that lived at least this long is restarted at once; one that died sooner waits, doubling. */
const STABLE_MS = 5_000
const FIRST_DELAY_MS = 100
const MAX_DELAY_MS = 5_000

/**
 * How long to wait before restarting a worker that died: a worker that keeps dying at start
 * (a broken file, a full disk) must not be restarted in a tight loop that floods the log.
 */
export class RestartBackoff {
  private readonly last = new Map<number, number>()

  /** The delay before the worker at `index`, which lived `livedMs`, is started again. */
  next(index: number, livedMs: number): number {
    const delay = livedMs >= STABLE_MS ? FIRST_DELAY_MS : Math.min((this.last.get(index) ?? FIRST_DELAY_MS / 2) * 2, MAX_DELAY_MS)
    this.last.set(index, delay)
    return delay
  }
}
