import { sql } from 'drizzle-orm'
import { QueryBuilder } from 'drizzle-orm/sqlite-core'
import { ApiError } from '../errors/api-error.ts'
import { hasChangeTracking } from '../tenant/migrations.ts'
import { DamagedFileError, type TenantLease } from '../tenant/lease.ts'
import { changeHistory } from '../tenant/schema.ts'
import { changedAfterRefused, type ChangesPosition, type ChangesTokenCodec } from './token.ts'

/** What one response reads and says about changes. */
export interface ChangeWindow {
  /** The response's X-Changes-Token; null for a file without change tracking (schema version 1–2). */
  token: string | null
  /** With `changedAfter`: only rows inserted or changed after this version. */
  sinceVersion: number | null
  /** The point of the file's history this snapshot has reached; null without change tracking. */
  reached: ChangesPosition | null
}

/**
 * The file's history id and the highest version ever given out. `sqlite_sequence` holds the
 * latter for an AUTOINCREMENT table: the change log's own highest row may be gone (a deleted
 * ticket leaves the log), and a token that went past it is still behind every later change.
 */
const CHANGE_STATE_SQL = new QueryBuilder()
  .select({
    // Aliased in SQL: the statement runs on bun:sqlite, which names columns as the SQL does.
    historyId: sql<string>`${changeHistory.historyId}`.as('historyId'),
    version: sql<number>`coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'ticket_changes'), 0)`.as('version'),
  })
  .from(changeHistory)
  .toSQL().sql

/**
 * Reads the change state of the lease's file and checks `since` (a decoded changedAfter) and
 * `seen` (the point a cursor's page had reached) against it. Call it inside the read
 * transaction the response's rows come from: the token then holds that snapshot's highest
 * version, so a change committed later comes with the next load (version order is commit order). Throws 400 `param: changedAfter` for a file without change tracking, or a token of
 * another history of the file; 503 `copy_behind` when either names a point of this history the
 * file has not reached (a replica's lagging copy: answering would leave rows out); a SQLite
 * error for a file that cannot be read.
 */
export function readChangeWindow(lease: TenantLease, codec: ChangesTokenCodec, since: ChangesPosition | null, seen: readonly (ChangesPosition | null)[] = []): ChangeWindow {
  const schemaVersion = lease.schema().version
  if (!hasChangeTracking(schemaVersion)) {
    if (since) throw notTracked(schemaVersion)
    return { token: null, sinceVersion: null, reached: null }
  }
  const state = lease.statement(CHANGE_STATE_SQL).get() as ChangesPosition | null
  // A version-3 file without its history row was damaged by hand: it cannot be served as tracked.
  if (!state) throw new DamagedFileError('change_history holds no history id')
  if (since && since.historyId !== state.historyId) throw otherHistory()
  // Within one history a version beyond the file's own is a copy that lags (a restore starts a
  // new history, docs/operations.md#backups): later, or on another replica, it will be there.
  // A cursor's point of another history (a recreated file) is not checked: its walk goes on.
  for (const point of [since, ...seen]) if (point && point.historyId === state.historyId && point.version > state.version) throw copyBehind()
  return { token: codec.encode(lease.organisationId, state), sinceVersion: since?.version ?? null, reached: state }
}

/** How long a client waits before asking again; a replica's copy is refreshed every few seconds. */
const COPY_BEHIND_RETRY_SECONDS = 1

function copyBehind() {
  return new ApiError(
    'copy_behind',
    "This copy of the organisation's data has not yet reached the point your changedAfter or cursor names (it is a replica that lags behind); retry after Retry-After, the same request.",
    {},
    { 'Retry-After': String(COPY_BEHIND_RETRY_SECONDS) },
  )
}

function notTracked(schemaVersion: number) {
  return changedAfterRefused(
    'not_tracked',
    `Change tracking is not enabled on this organisation's data yet (its file is at schema version ${schemaVersion}); an operator enables it with admin migrate, and until then load the range without changedAfter.`,
  )
}

function otherHistory() {
  return changedAfterRefused(
    'other_history',
    `Parameter 'changedAfter' belongs to an earlier history of this organisation's data (its file was recreated or restored since); load the range again without changedAfter, replace your copy with the result, and keep its X-Changes-Token.`,
  )
}
