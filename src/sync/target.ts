import type { Location } from '../contract/schemas.ts'
import { UsageError } from '../cli/args.ts'

/**
 * What `sync` writes into, whatever the engine (docs/loading.md#sync): the organisation's
 * locations, queues and tickets, and the sync's own state, in the same tables and columns on
 * every target. A window's rows and the state that records it are committed together, so a run
 * stopped anywhere keeps every window it committed and nothing of the one it was loading.
 * Implemented by the DuckDB file (duckdb-target.ts) and PostgreSQL (postgres-target.ts); one
 * shared test suite runs against both.
 */
export interface SyncTarget {
  /** How the target is named in messages: a file path, or a URL without its password. */
  readonly description: string
  /** The stored state; null before the first window of the first run is committed (or before the tables exist). */
  state(): Promise<SyncState | null>
  /** The ids of the mirror's locations (none before the tables exist): whose mirror it is, when no changes token says so. */
  locationIds(): Promise<string[]>
  /** The ids of the mirror's queues (none before the tables exist). */
  queueIds(): Promise<string[]>
  /** How many tickets the mirror holds (0 before the tables exist): what --max-delete's share is of. */
  ticketCount(): Promise<number>
  /**
   * Creates the tables, or brings a mirror of an earlier release up to this one's shape. Called
   * once the run's checks have passed (the organisation's among them), so that a refused run
   * changes nothing, not even the mirror's shape.
   */
  prepare(): Promise<void>
  /**
   * Upserts the locations and queues of /v1/queues, in one transaction; with `deleteAbsent`
   * (--reconcile) those the API no longer lists are deleted too.
   */
  upsertStructure(locations: readonly Location[], deleteAbsent: boolean): Promise<{ locations: RowCount; queues: RowCount }>
  /**
   * Loads one window's CSV export (as it downloads) and commits its rows with `state`, in one
   * transaction: rows new to the mirror are inserted, rows that differ are updated (by `id`).
   * With `reconcile`, tickets of the mirror created in that range that the export does not hold
   * are deleted, and so is any second copy of an id.
   */
  loadWindow(load: WindowLoad): Promise<RowCount>
  /** Saves the state alone (the run's summary at its end). */
  saveState(state: SyncState): Promise<void>
  /** The run's rows are all in: builds what is cheaper to build once than to keep up row by row (PostgreSQL's indexes). */
  completeRun(): Promise<void>
  /**
   * After a failed run: what this run created is removed if no window was committed into it (a
   * PostgreSQL schema; a DuckDB file is removed by the command once closed).
   */
  discardIfEmpty(): Promise<void>
  /** Removes its temporary files at once, without waiting: the process is ending on a signal. */
  abandon(): void
  close(): Promise<void>
}

export interface WindowLoad {
  /** The export's bytes: a header row, then one row per ticket, as the server sends them. */
  csv: ReadableStream<Uint8Array>
  /** A demo organisation's export carries one more column, `demo`, which is not mirrored. */
  demo: boolean
  /** The state that records this window, committed with its rows. */
  state: SyncState
  /** The range of creation times the export covers, when it is re-read whole by --reconcile. */
  reconcile?: { fromMs: number; toMs: number }
  /**
   * A changes window: once its rows are in, the ids the API says were deleted since the token
   * (sync/deletions.ts), deleted in the same transaction; null when the server does not record deletes.
   */
  deletions?: () => Promise<readonly string[] | null>
  /**
   * With `reconcile`: the most tickets this window may delete as absent from the export
   * (--max-delete); more throws TooManyDeletesError before anything is deleted.
   */
  maxDeletes?: number
}

export interface SyncState {
  baseUrl: string
  /** The start of the mirrored range of creation times. */
  since: number
  /** Every ticket created before this instant is in the mirror (as of the token below). */
  loadedUntil: number
  /** Set while the first run's backfill is not finished: the end it is going to. */
  backfillUntil: number | null
  /** X-Changes-Token to pass as changedAfter next run; null when the server keeps no change log. */
  changesToken: string | null
  /** Set while a --reconcile is not finished: the start of the next window it re-reads. */
  reconcileFrom: number | null
  lastRun: unknown
}

export interface RowCount {
  inserted: number
  updated: number
  deleted: number
}

export const noRows = (): RowCount => ({ inserted: 0, updated: 0, deleted: 0 })

/** The columns of the `locations` and `queues` tables that hold what /v1/queues lists (id first). */
export const STRUCTURE_COLUMNS = {
  locations: ['id', 'name', 'slug', 'time_zone'],
  queues: ['id', 'location_id', 'name', 'slug', 'status'],
} as const

/** The rows of the `locations` and `queues` tables, in STRUCTURE_COLUMNS' order, from /v1/queues. */
export function structureRows(locations: readonly Location[]): { locations: (string | null)[][]; queues: string[][] } {
  return {
    // A server of an earlier release serves no timeZone: none is known.
    locations: locations.map((l) => [l.id, l.name, l.slug, l.timeZone ?? null]),
    queues: locations.flatMap((l) => l.queues.map((q) => [q.id, l.id, q.name, q.slug, q.status])),
  }
}

/**
 * The zones of `locations` the engine does not know (its zone database older than the API's):
 * ticket_details could not compute their local times, and every query of it would fail, so the
 * run stops before writing, naming the zone and the location.
 */
export function checkZonesKnown(locations: readonly Location[], known: ReadonlySet<string>, engine: string): void {
  const unknown = locations.find((l) => l.timeZone && !known.has(l.timeZone))
  if (unknown) {
    throw new Error(`${engine} does not know the time zone '${unknown.timeZone}' of location ${unknown.id}: its zone database is older than the API's; update it (for DuckDB, a newer release of this program) and run sync again`)
  }
}

/** The distinct zones of the locations, for the engine to look up. */
export function zonesOf(locations: readonly Location[]): string[] {
  return [...new Set(locations.flatMap((l) => (l.timeZone ? [l.timeZone] : [])))]
}

/**
 * Wrong input found past the command line (the target's URL, a target that mirrors another
 * server): a UsageError, so exit status 2 with a message that says what to do.
 */
export class SyncInputError extends UsageError {}

/** Another run is writing into the target: this run ends having changed nothing (exit 1). */
export class TargetBusyError extends Error {}

/** A lock the run needed was held by someone else for longer than --timeout (exit 1). */
export class LockTimeoutError extends Error {}

/**
 * A --reconcile (or the list of locations and queues) would delete more of the mirror than
 * --max-delete allows: the run ends (exit 1) before deleting, its window rolled back.
 */
export class TooManyDeletesError extends Error {
  constructor(
    readonly what: string,
    readonly wouldDelete: number,
    readonly of: number,
    /** A reconcile compares window by window: a later window may add more, so the count is a floor. */
    readonly atLeast = false,
  ) {
    super(`the server's answer would delete ${atLeast ? 'at least ' : ''}${wouldDelete} of the mirror's ${of} ${what}`)
  }
}
