/** What the pool hands out: a lease on a tenant connection, and the error of a file that cannot be served. */
import type { Database, Statement } from 'bun:sqlite'
import type { RowBreach } from './row-check.ts'

/** What `acquire` hands out: use `db` until `release()`; call `fail()` when the file broke under a query. */
export interface TenantLease {
  readonly organisationId: string
  readonly db: Database
  statement(sql: string): Statement
  /** The file's schema version as this connection sees it now (inside a read transaction: its snapshot's). */
  schemaVersion(): number
  /**
   * Whether the file vouches for its rows: schema version 4 or later with all its triggers, so
   * that every row follows the contract's value rules (docs/operations.md#what-a-row-must-hold).
   * Otherwise each row read must be checked before it is served. As this connection sees the
   * file now (inside a read transaction: its snapshot's).
   */
  rowsGuaranteed(): boolean
  /** The 503 to throw instead of serving a row that breaks the value rules; logged with the row's id. */
  refuseRow(breach: RowBreach): TenantUnavailableError
  release(): void
  /** Marks the handle broken (it is reopened on the next acquire) and returns the 503 error to throw. */
  fail(cause: unknown): TenantUnavailableError
  /**
   * What to throw for `error`, met while reading on this lease. The SQL is ours and fixed, so a
   * SQLite error means the file broke (corrupt, truncated, swapped): the handle is failed and
   * the answer is 503, never an empty result. Anything else is a bug of ours and stays one (500).
   * The one place where a SQLite error becomes a 503.
   */
  failure(error: unknown): unknown
}

/**
 * Why a tenant file cannot be served, in words a client may read (the 503 body names it): never
 * a path, a SQL text or SQLite's own message, which go to the log only.
 */
export type TenantFailureKind = 'missing' | 'damaged' | 'unknown schema version' | 'busy' | 'unreadable' | 'holding a row that breaks the tenant contract'

/**
 * A tenant file that cannot be served: answered 503 `data_unavailable`, never an empty result.
 * `kind` is what the client reads; `reason` is for the log.
 */
export class TenantUnavailableError extends Error {
  constructor(
    readonly organisationId: string,
    readonly kind: TenantFailureKind,
    readonly reason: string,
  ) {
    super(`tenant data unavailable: ${reason}`)
    this.name = 'TenantUnavailableError'
  }
}

/** A file whose contents break what this program relies on, found by our own reading of it (not by SQLite). */
export class DamagedFileError extends Error {}

/** The kind and the log-safe reason of an error met opening or reading a file (SQLite's code and message; never a path). */
export function describeFileFailure(error: unknown): { kind: TenantFailureKind; reason: string } {
  const code = (error as { code?: unknown })?.code
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof DamagedFileError) return { kind: 'damaged', reason: message }
  if (typeof code !== 'string') return { kind: 'unreadable', reason: message }
  const kind = /^SQLITE_(BUSY|LOCKED)/.test(code) ? 'busy' : /^SQLITE_(CORRUPT|NOTADB|SCHEMA|ERROR)/.test(code) ? 'damaged' : 'unreadable'
  return { kind, reason: `${code}: ${message}` }
}
