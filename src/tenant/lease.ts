/** What the pool hands out: a lease on a tenant connection, and the error of a file that cannot be served. */
import type { Database, Statement } from 'bun:sqlite'

/** What `acquire` hands out: use `db` until `release()`; call `fail()` when the file broke under a query. */
export interface TenantLease {
  readonly organisationId: string
  readonly db: Database
  statement(sql: string): Statement
  /** The file's schema version as this connection sees it now (inside a read transaction: its snapshot's). */
  schemaVersion(): number
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
export type TenantFailureKind = 'missing' | 'damaged' | 'unknown schema version' | 'busy' | 'unreadable'

/** A tenant file that cannot be served: answered 503 `data_unavailable`, never an empty result. */
export class TenantUnavailableError extends Error {
  readonly kind: TenantFailureKind
  constructor(readonly organisationId: string, readonly reason: string) {
    super(`tenant data unavailable: ${reason}`)
    this.name = 'TenantUnavailableError'
    this.kind = failureKind(reason)
  }
}

/** The kind of a logged reason (see describeSqliteFailure and the reasons of TenantPool). */
function failureKind(reason: string): TenantFailureKind {
  if (reason === 'tenant file missing') return 'missing'
  if (reason.startsWith('unknown tenant schema version')) return 'unknown schema version'
  if (/^SQLITE_(BUSY|LOCKED)/.test(reason)) return 'busy'
  if (/^SQLITE_(CORRUPT|NOTADB|SCHEMA|ERROR)/.test(reason) || reason === 'change_history holds no history id') return 'damaged'
  return 'unreadable'
}
