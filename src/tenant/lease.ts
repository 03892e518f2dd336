/** What the pool hands out: a lease on a tenant connection, and the error of a file that cannot be served. */
import type { Statement } from 'bun:sqlite'
import type { RowBreach } from './row-check.ts'

/** What a tenant file says of itself, as the connection sees it now (inside a read transaction: its snapshot's). */
export interface TenantSchema {
  version: number
  /**
   * Whether the file vouches for its rows: schema version 4 or later with all its triggers, so
   * that every row follows the contract's value rules (docs/operations.md#what-a-row-must-hold).
   * Otherwise each row read must be checked before it is served.
   */
  rowsGuaranteed: boolean
}

/** What `acquire` hands out: statements on the tenant's connection until `release()`. */
export interface TenantLease {
  readonly organisationId: string
  /** A statement on the connection: cached for the short, repeated queries, or `fresh` for one that is iterated (a cached one would be reset by its next use). */
  statement(sql: string, options?: { fresh: boolean }): Statement
  schema(): TenantSchema
  release(): void
  /**
   * What to throw for `error`, met while reading on this lease; the one place where a failure of
   * the file becomes a 503. The SQL is ours and fixed, so a SQLite error, or a DamagedFileError,
   * means the file broke (corrupt, truncated, swapped): the handle is dropped and the answer is
   * 503, never an empty result. A RowBreachError is one row that cannot be served: 503, logged
   * with the row's id, the handle kept. Anything else is a bug of ours and stays one (500).
   */
  failure(error: unknown): unknown
}

/**
 * Why a tenant file cannot be served, in words a client may read (the 503 body names it): never
 * a path, a SQL text or SQLite's own message, which go to the log only.
 */
export type TenantFailureKind = 'missing' | 'not restored on this replica yet' | 'damaged' | 'unknown schema version' | 'busy' | 'unreadable' | 'holding a row that breaks the tenant contract'

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

/** A row about to be served breaks the contract's value rules (tenant/served-rows.ts). */
export class RowBreachError extends Error {
  constructor(readonly breach: RowBreach) {
    super(`a row breaks the tenant contract: ${breach.table} id ${JSON.stringify(breach.id)}: ${breach.rules.join('; ')}`)
    this.name = 'RowBreachError'
  }
}

/** The kind and the log-safe reason of an error met opening or reading a file (SQLite's code and message; never a path). */
export function describeFileFailure(error: unknown): { kind: TenantFailureKind; reason: string } {
  const code = (error as { code?: unknown })?.code
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof DamagedFileError) return { kind: 'damaged', reason: message }
  if (typeof code !== 'string') return { kind: 'unreadable', reason: message }
  const kind = /^SQLITE_(BUSY|LOCKED)/.test(code) ? 'busy' : /^SQLITE_(CORRUPT|NOTADB|SCHEMA|ERROR)/.test(code) ? 'damaged' : 'unreadable'
  return { kind, reason: `${code}: ${message}` }
}
