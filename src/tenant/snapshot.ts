import type { TenantLease } from './lease.ts'
import type { Statement } from 'bun:sqlite'

/**
 * One read of a tenant file in one snapshot: it owns the lease, the read transaction (begun
 * here, so that everything read through it comes from one state of the file, such as a page's
 * rows and its X-Changes-Token) and the statement it iterates. `close()` ends all three, once,
 * however the read ends. Every step that fails closes it and throws what `lease.failure` makes
 * of the error: 503 for a file that broke, the error itself for a bug of ours.
 * Made by `TenantPool.openSnapshot`.
 */
export class TenantSnapshot {
  private statement: Statement | undefined
  private rows: IterableIterator<unknown> | undefined
  private closed = false
  private began = false

  constructor(readonly lease: TenantLease) {
    this.guard(() => {
      lease.statement('BEGIN').run()
      this.began = true
    })
  }

  get organisationId(): string {
    return this.lease.organisationId
  }

  /** Runs `read` on the snapshot's connection; reads only. */
  read<T>(read: (lease: TenantLease) => T): T {
    return this.guard(() => read(this.lease))
  }

  /**
   * Starts the snapshot's iteration of `sql` bound to `values`, on a statement of its own (not
   * a cached one: a second use would reset it), stepped by `next`.
   */
  iterate(sql: string, values: readonly (string | number)[]): void {
    this.guard(() => {
      this.statement = this.lease.statement(sql, { fresh: true })
      this.rows = this.statement.iterate(...values)
    })
  }

  /** The next row of the iteration. Called once per row of an export: no closure made per call. */
  next(): IteratorResult<unknown> {
    try {
      return this.rows!.next()
    } catch (error) {
      throw this.failed(error)
    }
  }

  /** Ends the iteration, the read transaction and the lease. Idempotent; never throws for a broken connection. */
  close(): void {
    if (this.closed) return
    this.closed = true
    try {
      this.rows?.return?.()
      this.statement?.finalize()
      // Reads only: ending the transaction commits nothing.
      if (this.began) this.lease.statement('ROLLBACK').run()
    } catch {
      // A connection that broke under the read is failed by `guard`; releasing it closes it.
    } finally {
      this.lease.release()
    }
  }

  private guard<T>(step: () => T): T {
    try {
      return step()
    } catch (error) {
      throw this.failed(error)
    }
  }

  /** What a failed step throws (see `lease.failure`), the snapshot closed first. */
  private failed(error: unknown): unknown {
    const thrown = this.lease.failure(error)
    this.close()
    return thrown
  }
}
