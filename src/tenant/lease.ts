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
  if (reason.startsWith(ROW_BREACH_REASON)) return 'holding a row that breaks the tenant contract'
  if (reason.startsWith('unknown tenant schema version')) return 'unknown schema version'
  if (/^SQLITE_(BUSY|LOCKED)/.test(reason)) return 'busy'
  if (/^SQLITE_(CORRUPT|NOTADB|SCHEMA|ERROR)/.test(reason) || reason === 'change_history holds no history id') return 'damaged'
  return 'unreadable'
}

/** How the reason of a refused row starts (the rest names the row and the rules it breaks, for the log). */
export const ROW_BREACH_REASON = 'a row breaks the tenant contract'
