/**
 * How long each running export has gone without writing a row, for the stall gauge
 * (docs/operations.md#alerts). A total row rate cannot tell a stuck export while another one
 * progresses; the longest wait of any single export can. Monotonic time: a step of the wall
 * clock is not a stall.
 */
export class ExportStalls {
  /** Each running export's time of its last row (or of its start), by the handle that ends it. */
  private readonly lastRowAt = new Map<object, number>()

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** An export started: its wait counts from now. */
  started(): { wroteRows(): void; ended(): boolean } {
    const key = {}
    this.lastRowAt.set(key, this.now())
    return {
      wroteRows: () => {
        if (this.lastRowAt.has(key)) this.lastRowAt.set(key, this.now())
      },
      /** True the first time, when the export was still counted. */
      ended: () => this.lastRowAt.delete(key),
    }
  }

  /** Seconds since the export that has waited longest wrote a row; 0 when none runs. */
  longestSeconds(): number {
    let oldest = Infinity
    for (const at of this.lastRowAt.values()) oldest = Math.min(oldest, at)
    return oldest === Infinity ? 0 : Math.max(0, (this.now() - oldest) / 1000)
  }
}
