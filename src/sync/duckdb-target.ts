import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import type { Location } from '../contract/schemas.ts'
import { spoolCsvInChunks } from './csv-chunks.ts'
import { columnDefinitions, columnList, rowsDiffer, TICKET_COLUMNS } from './ticket-columns.ts'
import { checkZonesKnown, noRows, STRUCTURE_COLUMNS, structureRows, TooManyDeletesError, zonesOf, type RowCount, type SyncState, type SyncTarget, type WindowLoad } from './target.ts'
import { commentStatements, ticketDetailsView } from './mirror-catalog.ts'
import { DiskFullError, freeBytes, isDiskFull } from './disk-full.ts'

/**
 * The DuckDB file `sync` keeps current (docs/loading.md#the-duckdb-file). `tickets` has no
 * primary key: DuckDB keeps a key as an ART index that must fit in memory while it is built, so
 * a keyed table's memory grows with its row count; unkeyed, each window is merged by `id` (a
 * hash join, which spills to disk under the memory cap), and uniqueness is the merge's job,
 * checked by the tests and restored by --reconcile.
 */

/** The tickets' columns in DuckDB's types, and as the table's definition (no key: see dropTicketKey). */
const DUCKDB_TYPES = { text: 'VARCHAR', integer: 'INTEGER', timestamp: 'TIMESTAMPTZ' } as const
const TICKETS_COLUMNS_DDL = columnDefinitions(DUCKDB_TYPES)

/** `_synced_at` on every mirrored row: set when the row is written, kept while it is unchanged. */
const SYNCED_AT_DDL = '_synced_at TIMESTAMPTZ DEFAULT current_timestamp'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS locations (
    id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, slug VARCHAR NOT NULL
  );
  CREATE TABLE IF NOT EXISTS queues (
    id VARCHAR PRIMARY KEY, location_id VARCHAR NOT NULL, name VARCHAR NOT NULL, slug VARCHAR NOT NULL, status VARCHAR NOT NULL
  );
  CREATE TABLE IF NOT EXISTS tickets (${TICKETS_COLUMNS_DDL});
  ALTER TABLE locations ADD COLUMN IF NOT EXISTS ${SYNCED_AT_DDL};
  ALTER TABLE queues ADD COLUMN IF NOT EXISTS ${SYNCED_AT_DDL};
  ALTER TABLE tickets ADD COLUMN IF NOT EXISTS ${SYNCED_AT_DDL};
  ALTER TABLE locations ADD COLUMN IF NOT EXISTS time_zone VARCHAR;
  CREATE TABLE IF NOT EXISTS _sync_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    base_url VARCHAR NOT NULL,
    since TIMESTAMPTZ NOT NULL,
    loaded_until TIMESTAMPTZ NOT NULL,
    backfill_until TIMESTAMPTZ,
    changes_token VARCHAR,
    last_run JSON
  );
  ALTER TABLE _sync_state ADD COLUMN IF NOT EXISTS reconcile_from TIMESTAMPTZ;
  ${ticketDetailsView((table) => table, (from, to) => `CAST((epoch_ms(${to}) - epoch_ms(${from})) * 0.001 AS DECIMAL(18, 3))`, (instant, zone) => `timezone(${zone}, ${instant})`)};
  ${commentStatements((table) => table).join(';\n  ')};
`

/** The CSV export's columns, typed as the table's; `demo` is the extra column of a demo organisation's export. */
const CSV_COLUMNS = TICKET_COLUMNS.map((column) => `'${column.field}': '${DUCKDB_TYPES[column.kind]}'`).join(', ')
const CSV_AS_COLUMNS = TICKET_COLUMNS.map((column) => `"${column.field}" AS ${column.name}`).join(', ')

/**
 * DuckDB's own memory is capped, so that the sync process's memory does not follow the row
 * count (DuckDB spills to a temporary directory beside the file past it); insertion order is not
 * kept, which a bulk load does not need and which costs memory.
 */
const DUCKDB_MEMORY_LIMIT = '128MB'
const DUCKDB_SETTINGS = { memory_limit: DUCKDB_MEMORY_LIMIT, preserve_insertion_order: 'false' }

/**
 * A window's export is cut into files of this size on its way in: DuckDB reads one while the
 * next downloads (csv-chunks.ts). Large enough that each read's fixed cost is small, small enough
 * that the two files on disk at a time stay small.
 */
const CHUNK_BYTES = 16 * 2 ** 20

export class DuckDbTarget implements SyncTarget {
  /**
   * Where a window's export is cut into files on its way in, removed on close: a folder in the
   * mirror's own folder (as DuckDB's spill files, `<file>.tmp`), so that one file system's space
   * is the run's, and a full one is named as such (docs/loading.md#the-duckdb-file).
   */
  private readonly scratch: string

  private constructor(
    readonly description: string,
    private readonly instance: DuckDBInstance,
    private readonly db: DuckDBConnection,
  ) {
    removeDeadSpools(this.folder)
    this.scratch = mkdtempSync(join(this.folder, `.sync-spool-${process.pid}-`))
  }

  /** The folder that holds the mirror, its write-ahead log, its spill files and the spool. */
  private get folder(): string {
    return dirname(resolve(this.description))
  }

  /** Opens (creating if needed) the file; its tables are made by prepare(). Throws if another process holds it. */
  static async open(path: string): Promise<DuckDbTarget> {
    const instance = await DuckDBInstance.create(path, DUCKDB_SETTINGS)
    try {
      return new DuckDbTarget(path, instance, await instance.connect())
    } catch (error) {
      instance.closeSync()
      throw error
    }
  }

  async prepare(): Promise<void> {
    await this.db.run(SCHEMA)
    await this.dropTicketKey()
    // Into the file now, not left in its write-ahead log: DuckDB fails to replay a view and
    // its comments from the log after a killed run (an internal error on the next open).
    await this.db.run('CHECKPOINT')
  }

  /** The columns `table` has in the file (none when it does not exist yet). */
  private async columns(table: string): Promise<Set<string>> {
    const reader = await this.db.runAndReadAll(`SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = $table`, { table })
    return new Set(reader.getRowsJS().map((row) => String(row[0])))
  }

  async locationIds(): Promise<string[]> {
    if (!(await this.columns('locations')).has('id')) return []
    return (await this.db.runAndReadAll('SELECT id FROM locations')).getRowsJS().map((row) => String(row[0]))
  }

  /**
   * A file made by an earlier version has a primary key on `tickets` (an ART index): DuckDB
   * cannot drop a key, so the table is rebuilt without it, once.
   */
  private async dropTicketKey(): Promise<void> {
    const keyed = await this.db.runAndReadAll(`SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'tickets' AND constraint_type = 'PRIMARY KEY'`)
    if (Number(keyed.getRowsJS()[0]![0]) === 0) return
    await this.transaction(async () => {
      await this.db.run(`CREATE TABLE _tickets_unkeyed AS SELECT ${columnList()}, _synced_at FROM tickets`)
      await this.db.run('DROP VIEW ticket_details')
      await this.db.run('DROP TABLE tickets')
      await this.db.run(`CREATE TABLE tickets (${TICKETS_COLUMNS_DDL}, ${SYNCED_AT_DDL})`)
      await this.db.run(`INSERT INTO tickets SELECT * FROM _tickets_unkeyed`)
      await this.db.run('DROP TABLE _tickets_unkeyed')
      await this.db.run(SCHEMA)
    })
  }

  async state(): Promise<SyncState | null> {
    // Read before prepare(): the table may not exist yet, or lack a column an earlier release did not write.
    const columns = await this.columns('_sync_state')
    if (columns.size === 0) return null
    const reader = await this.db.runAndReadAll(
      `SELECT base_url, epoch_ms(since), epoch_ms(loaded_until), epoch_ms(backfill_until), changes_token,
         ${columns.has('reconcile_from') ? 'epoch_ms(reconcile_from)' : 'NULL'}, last_run FROM _sync_state WHERE id = 1`,
    )
    const row = reader.getRowsJS()[0]
    if (!row) return null
    const [baseUrl, since, loadedUntil, backfillUntil, changesToken, reconcileFrom, lastRun] = row
    return {
      baseUrl: String(baseUrl),
      since: Number(since),
      loadedUntil: Number(loadedUntil),
      backfillUntil: backfillUntil === null ? null : Number(backfillUntil),
      changesToken: (changesToken as string | null) ?? null,
      reconcileFrom: reconcileFrom === null ? null : Number(reconcileFrom),
      lastRun: typeof lastRun === 'string' ? JSON.parse(lastRun) : null,
    }
  }

  /** The state alone (a reconcile owed, the run's summary at its end), put into the file at once: no write-ahead log is left. */
  async saveState(state: SyncState): Promise<void> {
    await this.writeState(state)
    await this.completeRun()
  }

  private async writeState(state: SyncState): Promise<void> {
    const at = (ms: string) => `CASE WHEN $${ms} IS NULL THEN NULL ELSE make_timestamptz($${ms} * 1000) END`
    await this.db.run(
      `INSERT OR REPLACE INTO _sync_state (id, base_url, since, loaded_until, backfill_until, changes_token, last_run, reconcile_from)
       VALUES (1, $baseUrl, ${at('since')}, ${at('loadedUntil')}, ${at('backfillUntil')}, $changesToken, $lastRun, ${at('reconcileFrom')})`,
      {
        baseUrl: state.baseUrl,
        since: state.since,
        loadedUntil: state.loadedUntil,
        backfillUntil: state.backfillUntil,
        changesToken: state.changesToken,
        lastRun: state.lastRun === null ? null : JSON.stringify(state.lastRun),
        reconcileFrom: state.reconcileFrom,
      },
    )
  }

  /** Runs `work` in one transaction: its rows and the state it saves are committed together, or neither. */
  private async transaction<T>(work: () => Promise<T>): Promise<T> {
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
   * The export is cut into files as it downloads and each file goes into `tickets` as soon as it
   * is complete, all in the window's transaction. Into a table that was empty when the window
   * began (a first run's first window) the rows are appended: one export holds each id once, so
   * there is nothing to merge, and no hash table to build. Otherwise each file is merged by `id`;
   * a --reconcile keeps the window's ids to find what the server no longer has. The number
   * inserted is the table's growth (a count DuckDB keeps without reading the rows); the rest of
   * what the merge touched was updated.
   */
  async loadWindow(load: WindowLoad): Promise<RowCount> {
    const freeBefore = freeBytes(this.folder)
    let downloaded = 0
    const counted = load.csv.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          downloaded += chunk.length
          controller.enqueue(chunk)
        },
      }),
    )
    try {
      const count = await this.loadWindowRows({ ...load, csv: counted })
      // Into the file at once: a write-ahead log left beside the file is what a later failure
      // (a full disk) could leave unreplayable, and readers would replay it on every open.
      await this.db.run('CHECKPOINT')
      return count
    } catch (error) {
      if (!isDiskFull(error)) throw error
      throw new DiskFullError(this.folder, freeBefore, downloaded)
    }
  }

  private async loadWindowRows(load: WindowLoad): Promise<RowCount> {
    return this.transaction(async () => {
      const count = noRows()
      const before = await this.ticketCount()
      const append = before === 0 && !load.reconcile
      let merged = 0
      if (load.reconcile) await this.db.run('CREATE OR REPLACE TEMP TABLE _window_ids (id VARCHAR)')
      await spoolCsvInChunks(load.csv, this.scratch, CHUNK_BYTES, async (file) => {
        const rows = `SELECT ${CSV_AS_COLUMNS} FROM read_csv($file, header = true, auto_detect = false,
          delim = ',', quote = '"', escape = '"', nullstr = '', columns = {${CSV_COLUMNS}${load.demo ? ", 'demo': 'INTEGER'" : ''}})`
        if (append) {
          await this.db.run(`INSERT INTO tickets (${columnList()}) ${rows}`, { file })
          return
        }
        let source = `(${rows})`
        if (load.reconcile) {
          await this.db.run(`CREATE OR REPLACE TEMP TABLE _chunk AS ${rows}`, { file })
          await this.db.run('INSERT INTO _window_ids SELECT id FROM _chunk')
          source = '_chunk'
        }
        const result = await this.db.runAndReadAll(
          `MERGE INTO tickets USING ${source} AS s ON tickets.id = s.id
             WHEN MATCHED AND (${rowsDiffer('tickets', 's')}) THEN UPDATE SET ${TICKET_COLUMNS.map((c) => `${c.name} = s.${c.name}`).join(', ')}, _synced_at = current_timestamp
             WHEN NOT MATCHED THEN INSERT (${columnList()}) VALUES (${columnList('s')})`,
          load.reconcile ? undefined : { file },
        )
        merged += Number(result.getRowsJS()[0]![0])
      })
      await this.db.run('DROP TABLE IF EXISTS _chunk')
      count.inserted = (await this.ticketCount()) - before
      count.updated = append ? 0 : merged - count.inserted
      if (load.reconcile) {
        count.deleted = await this.deleteAbsent(load.reconcile, load.maxDeletes)
        await this.db.run('DROP TABLE _window_ids')
      }
      if (load.deletions) count.deleted += await this.deleteIds((await load.deletions()) ?? [])
      await this.writeState(load.state)
      return count
    })
  }

  /**
   * --reconcile: deletes the mirror's tickets created in the range that the server's export of
   * it did not hold, and any second copy of an id the export held (a copy can only come from a
   * failure of uniqueness, which this puts right).
   */
  private async deleteAbsent(range: { fromMs: number; toMs: number }, maxDeletes = Infinity): Promise<number> {
    const absentWhere = `FROM tickets WHERE created_at >= make_timestamptz($from * 1000) AND created_at < make_timestamptz($to * 1000)
         AND NOT EXISTS (SELECT 1 FROM _window_ids w WHERE w.id = tickets.id)`
    const would = Number((await this.db.runAndReadAll(`SELECT count(*) ${absentWhere}`, { from: range.fromMs, to: range.toMs })).getRowsJS()[0]![0])
    if (would > maxDeletes) throw new TooManyDeletesError('tickets', would, await this.ticketCount(), true)
    const absent = await this.db.runAndReadAll(
      `DELETE FROM tickets WHERE created_at >= make_timestamptz($from * 1000) AND created_at < make_timestamptz($to * 1000)
         AND NOT EXISTS (SELECT 1 FROM _window_ids w WHERE w.id = tickets.id)`,
      { from: range.fromMs, to: range.toMs },
    )
    const copies = await this.db.runAndReadAll(
      `DELETE FROM tickets WHERE rowid IN (
         SELECT rowid FROM (SELECT rowid, row_number() OVER (PARTITION BY id) AS copy FROM tickets WHERE id IN (SELECT id FROM _window_ids)) WHERE copy > 1)`,
    )
    return Number(absent.getRowsJS()[0]![0]) + Number(copies.getRowsJS()[0]![0])
  }

  /** Deletes the tickets of these ids (the change feed's deletes), every copy; returns how many rows went. */
  private async deleteIds(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0
    const deleted = await this.db.runAndReadAll(`DELETE FROM tickets WHERE id IN (SELECT unnest(from_json($ids, '["VARCHAR"]')))`, { ids: JSON.stringify(ids) })
    return Number(deleted.getRowsJS()[0]![0])
  }

  async queueIds(): Promise<string[]> {
    if (!(await this.columns('queues')).has('id')) return []
    return (await this.db.runAndReadAll('SELECT id FROM queues')).getRowsJS().map((row) => String(row[0]))
  }

  async ticketCount(): Promise<number> {
    if (!(await this.columns('tickets')).has('id')) return 0
    return Number((await this.db.runAndReadAll('SELECT count(*) FROM tickets')).getRowsJS()[0]![0])
  }

  async upsertStructure(locations: readonly Location[], deleteAbsent: boolean): Promise<{ locations: RowCount; queues: RowCount }> {
    const rows = structureRows(locations)
    const zones = zonesOf(locations)
    if (zones.length > 0) {
      const known = await this.db.runAndReadAll(`SELECT name FROM pg_timezone_names() WHERE name IN (${zones.map((_, i) => `$z${i}`).join(', ')})`, Object.fromEntries(zones.map((z, i) => [`z${i}`, z])))
      checkZonesKnown(locations, new Set(known.getRowsJS().map((row) => String(row[0]))), 'DuckDB')
    }
    return this.transaction(async () => ({
      // Queues first: a location deleted here takes no queue's row with it, each table counts its own.
      queues: await this.upsertRows('queues', STRUCTURE_COLUMNS.queues, rows.queues, deleteAbsent),
      locations: await this.upsertRows('locations', STRUCTURE_COLUMNS.locations, rows.locations, deleteAbsent),
    }))
  }

  /** Inserts new rows, updates those that differ (a new `_synced_at`), leaves the same ones be; with `deleteAbsent`, deletes the rest. */
  private async upsertRows(table: 'locations' | 'queues', columns: readonly string[], rows: (string | null)[][], deleteAbsent: boolean): Promise<RowCount> {
    const count = noRows()
    const values = (row: (string | null)[]) => Object.fromEntries(row.map((v, i) => [`p${i}`, v]))
    for (const row of rows) {
      const existing = (await this.db.runAndReadAll(`SELECT ${columns.join(', ')} FROM ${table} WHERE id = $id`, { id: row[0]! })).getRowsJS()[0]
      if (!existing) {
        count.inserted++
        await this.db.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${row.map((_, i) => `$p${i}`).join(', ')})`, values(row))
      } else if (existing.some((value, i) => value !== row[i])) {
        count.updated++
        const set = columns.slice(1).map((column, i) => `${column} = $p${i + 1}`).join(', ')
        await this.db.run(`UPDATE ${table} SET ${set}, _synced_at = current_timestamp WHERE id = $p0`, values(row))
      }
    }
    if (deleteAbsent) {
      const keep = rows.length === 0 ? '' : `WHERE id NOT IN (${rows.map((_, i) => `$p${i}`).join(', ')})`
      const deleted = await this.db.runAndReadAll(`DELETE FROM ${table} ${keep}`, values(rows.map((row) => row[0]!)))
      count.deleted = Number(deleted.getRowsJS()[0]![0])
    }
    return count
  }

  /**
   * Nothing to build (DuckDB's zone maps serve time-range reads without an index, and an ART
   * index would have to fit in memory); the run's last writes go into the file, so that no
   * write-ahead log is left beside it.
   */
  async completeRun(): Promise<void> {
    const freeBefore = freeBytes(this.folder)
    try {
      await this.db.run('CHECKPOINT')
    } catch (error) {
      if (!isDiskFull(error)) throw error
      throw new DiskFullError(this.folder, freeBefore, null, 'before the last checkpoint')
    }
  }

  /** Nothing here: the command removes a file it created once the file is closed. */
  async discardIfEmpty(): Promise<void> {}

  abandon(): void {
    rmSync(this.scratch, { recursive: true, force: true })
  }

  async close(): Promise<void> {
    this.db.closeSync()
    this.instance.closeSync()
    this.abandon()
  }
}

/**
 * Removes the spool folders of runs that are gone (killed: a run that ends removes its own), so
 * that crashes do not pile them up beside the mirror. A folder names its run's pid; one whose
 * process is alive, another run's into a file beside this one, is left alone, and so is one that
 * names no pid (nothing says whose it is).
 */
function removeDeadSpools(folder: string): void {
  let names: string[]
  try {
    names = readdirSync(folder)
  } catch {
    return
  }
  for (const name of names) {
    const pid = Number(/^\.sync-spool-(\d+)-/.exec(name)?.[1] ?? NaN)
    if (!Number.isSafeInteger(pid) || pid === process.pid || processAlive(pid)) continue
    rmSync(join(folder, name), { recursive: true, force: true })
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, someone else's.
    return (error as { code?: string }).code === 'EPERM'
  }
}
