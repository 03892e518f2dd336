import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import type { Location } from '../contract/schemas.ts'

/**
 * The DuckDB file `sync` keeps current (docs/loading.md#the-duckdb-file): the organisation's
 * locations, queues and tickets with explicit types (every timestamp TIMESTAMPTZ, `number`
 * INTEGER, absent values NULL), upserted by `id`, and the sync's own state in `_sync_state`, so
 * that a window's rows and the state that records them are committed together.
 */

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS locations (
    id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, slug VARCHAR NOT NULL
  );
  CREATE TABLE IF NOT EXISTS queues (
    id VARCHAR PRIMARY KEY, location_id VARCHAR NOT NULL, name VARCHAR NOT NULL, slug VARCHAR NOT NULL, status VARCHAR NOT NULL
  );
  CREATE TABLE IF NOT EXISTS tickets (
    id VARCHAR NOT NULL,
    number INTEGER NOT NULL,
    queue_id VARCHAR NOT NULL,
    location_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    called_at TIMESTAMPTZ,
    completed_at TIMESTAMPTZ,
    cancelled_at TIMESTAMPTZ,
    skipped_at TIMESTAMPTZ,
    no_show_at TIMESTAMPTZ,
    called_by_device_session_id VARCHAR
  );
  CREATE TABLE IF NOT EXISTS _sync_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    base_url VARCHAR NOT NULL,
    since TIMESTAMPTZ NOT NULL,
    loaded_until TIMESTAMPTZ NOT NULL,
    backfill_until TIMESTAMPTZ,
    changes_token VARCHAR,
    last_run JSON
  );
`

/** The CSV export's columns, typed; `demo` is the extra column of a demo organisation's export. */
const CSV_COLUMNS = `{'id': 'VARCHAR', 'number': 'INTEGER', 'queueId': 'VARCHAR', 'locationId': 'VARCHAR', 'status': 'VARCHAR',
  'createdAt': 'TIMESTAMPTZ', 'calledAt': 'TIMESTAMPTZ', 'completedAt': 'TIMESTAMPTZ', 'cancelledAt': 'TIMESTAMPTZ',
  'skippedAt': 'TIMESTAMPTZ', 'noShowAt': 'TIMESTAMPTZ', 'calledByDeviceSessionId': 'VARCHAR'`

export interface SyncState {
  baseUrl: string
  /** The start of the mirrored range of creation times. */
  since: number
  /** Every ticket created before this instant is in the file (as of the token below). */
  loadedUntil: number
  /** Set while the first run's backfill is not finished: the end it is going to. */
  backfillUntil: number | null
  /** X-Changes-Token to pass as changedAfter next run; null when the server keeps no change log. */
  changesToken: string | null
  lastRun: unknown
}

export interface UpsertCount {
  inserted: number
  updated: number
}

/**
 * DuckDB's own memory is bounded, so that the sync process's memory does not follow the row
 * count (DuckDB spills to disk past it); insertion order is not kept, which a bulk insert does
 * not need and which costs memory.
 */
const DUCKDB_SETTINGS = { memory_limit: '512MB', preserve_insertion_order: 'false' }

export class Warehouse {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly db: DuckDBConnection,
  ) {}

  /** Opens (creating if needed) the file and its tables. Throws if another process holds it. */
  static async open(path: string): Promise<Warehouse> {
    const instance = await DuckDBInstance.create(path, DUCKDB_SETTINGS)
    const db = await instance.connect()
    await db.run(SCHEMA)
    return new Warehouse(instance, db)
  }

  async state(): Promise<SyncState | null> {
    const reader = await this.db.runAndReadAll(
      `SELECT base_url, epoch_ms(since), epoch_ms(loaded_until), epoch_ms(backfill_until), changes_token, last_run FROM _sync_state WHERE id = 1`,
    )
    const row = reader.getRowsJS()[0]
    if (!row) return null
    const [baseUrl, since, loadedUntil, backfillUntil, changesToken, lastRun] = row
    return {
      baseUrl: String(baseUrl),
      since: Number(since),
      loadedUntil: Number(loadedUntil),
      backfillUntil: backfillUntil === null ? null : Number(backfillUntil),
      changesToken: (changesToken as string | null) ?? null,
      lastRun: typeof lastRun === 'string' ? JSON.parse(lastRun) : null,
    }
  }

  async saveState(state: SyncState): Promise<void> {
    await this.db.run(
      `INSERT OR REPLACE INTO _sync_state VALUES (1, $baseUrl, make_timestamptz($since * 1000), make_timestamptz($loadedUntil * 1000),
         CASE WHEN $backfillUntil IS NULL THEN NULL ELSE make_timestamptz($backfillUntil * 1000) END, $changesToken, $lastRun)`,
      {
        baseUrl: state.baseUrl,
        since: state.since,
        loadedUntil: state.loadedUntil,
        backfillUntil: state.backfillUntil,
        changesToken: state.changesToken,
        lastRun: state.lastRun === null ? null : JSON.stringify(state.lastRun),
      },
    )
  }

  /** Runs `work` in one transaction: its rows and the state it saves are committed together, or neither. */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    await this.db.run('BEGIN TRANSACTION')
    try {
      const result = await work()
      await this.db.run('COMMIT')
      return result
    } catch (error) {
      await this.db.run('ROLLBACK').catch(() => undefined)
      throw error
    }
  }

  /**
   * Whether `tickets` has its primary key yet. The first run's backfill inserts into the table
   * without it, window after window (windows do not overlap, and each is committed whole, so no
   * id can come twice), and adds the key once at the end: building the index once is about four
   * times faster than keeping it up to date row by row (docs/loading.md#sync).
   */
  async hasTicketKey(): Promise<boolean> {
    const reader = await this.db.runAndReadAll(`SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'tickets' AND constraint_type = 'PRIMARY KEY'`)
    return Number(reader.getRowsJS()[0]![0]) > 0
  }

  /**
   * Adds the key at the end of the first backfill. A ticket whose created_at was changed between
   * two windows' reads can have come in both: the copy appended last (the later read) is kept.
   */
  async addTicketKey(): Promise<void> {
    // Two statements, each its own transaction: DuckDB checks the new key against the table as
    // committed, so the duplicates must be gone first.
    await this.db.run(
      `DELETE FROM tickets WHERE rowid IN (
         SELECT rowid FROM (SELECT rowid, row_number() OVER (PARTITION BY id ORDER BY rowid DESC) AS copy FROM tickets) WHERE copy > 1)`,
    )
    await this.db.run('ALTER TABLE tickets ADD PRIMARY KEY (id)')
  }

  /**
   * Loads the tickets of a CSV export saved at `file` (read by DuckDB's own CSV reader, with the
   * types above): upserted by id once the table has its key, appended before (see hasTicketKey).
   */
  async upsertTicketsCsv(file: string, demo: boolean): Promise<UpsertCount> {
    const source = `read_csv($file, header = true, auto_detect = false, delim = ',', quote = '"', escape = '"',
      nullstr = '', columns = ${CSV_COLUMNS}${demo ? ", 'demo': 'INTEGER'" : ''}})`
    const columns = `id, number, queueId, locationId, status, createdAt, calledAt, completedAt, cancelledAt, skippedAt, noShowAt, calledByDeviceSessionId`
    if (!(await this.hasTicketKey())) {
      const appended = await this.db.runAndReadAll(`INSERT INTO tickets SELECT ${columns} FROM ${source}`, { file })
      return { inserted: Number(appended.getRowsJS()[0]![0]), updated: 0 }
    }
    const counted = await this.db.runAndReadAll(
      `SELECT count(*), count(t.id) FROM ${source} AS r LEFT JOIN tickets AS t ON t.id = r.id`,
      { file },
    )
    const [total, existing] = counted.getRowsJS()[0]!.map(Number) as [number, number]
    await this.db.run(`INSERT OR REPLACE INTO tickets SELECT ${columns} FROM ${source}`, { file })
    return { inserted: total - existing, updated: existing }
  }

  /** Upserts the locations and queues of /v1/queues. */
  async upsertStructure(locations: readonly Location[]): Promise<{ locations: UpsertCount; queues: UpsertCount }> {
    const locationCount = await this.upsertRows(
      'locations',
      locations.map((l) => [l.id, l.name, l.slug]),
    )
    const queueCount = await this.upsertRows(
      'queues',
      locations.flatMap((l) => l.queues.map((q) => [q.id, l.id, q.name, q.slug, q.status])),
    )
    return { locations: locationCount, queues: queueCount }
  }

  private async upsertRows(table: 'locations' | 'queues', rows: string[][]): Promise<UpsertCount> {
    let inserted = 0
    let updated = 0
    for (const row of rows) {
      const exists = await this.db.runAndReadAll(`SELECT count(*) FROM ${table} WHERE id = $id`, { id: row[0]! })
      if (Number(exists.getRowsJS()[0]![0]) > 0) updated++
      else inserted++
      await this.db.run(`INSERT OR REPLACE INTO ${table} VALUES (${row.map((_, i) => `$p${i}`).join(', ')})`, Object.fromEntries(row.map((v, i) => [`p${i}`, v])))
    }
    return { inserted, updated }
  }

  close(): void {
    this.db.closeSync()
    this.instance.closeSync()
  }
}
