import { SQL, type ReservedSQL } from 'bun'
import type { Location } from '../contract/schemas.ts'
import { tlsOption, type PostgresLocation } from './postgres-location.ts'
import { columnDefinitions, columnList, rowsDiffer, TICKET_COLUMNS } from './ticket-columns.ts'
import { checkZonesKnown, LockTimeoutError, TooManyDeletesError, noRows, STRUCTURE_COLUMNS, structureRows, SyncInputError, TargetBusyError, type RowCount, type SyncState, type SyncTarget, type WindowLoad, zonesOf } from './target.ts'
import { lockHolders } from './lock-holders.ts'
import { commentStatements, TICKET_DETAILS_COMMENT, ticketDetailsView } from './mirror-catalog.ts'

/**
 * A PostgreSQL schema `sync` keeps current (docs/loading.md#postgresql): the same tables and
 * columns as the DuckDB file, with `tickets.id` a primary key (a B-tree on disk). Each window is
 * streamed with `COPY … FROM STDIN` into a temporary table as it downloads, then upserted into
 * `tickets` with the window's state in the same transaction, so a reader querying meanwhile sees
 * the window wholly or not at all, and never waits: the upsert takes row locks only.
 * The client is Bun's own (`Bun.sql`): it speaks COPY and needs no dependency
 * (docs/decisions/0014-bun-sql-for-postgresql.md).
 */

/** The tickets' columns in PostgreSQL's types, as a table's definition. */
const TICKETS_COLUMNS_DDL = columnDefinitions({ text: 'TEXT', integer: 'INTEGER', timestamp: 'TIMESTAMPTZ' })

/** `_synced_at` on every mirrored row: set when the row is written, kept while it is unchanged. */
const SYNCED_AT_DDL = '_synced_at TIMESTAMPTZ DEFAULT now()'

export class PostgresTarget implements SyncTarget {
  private readonly tickets: string
  private readonly state_: string
  /** Whether prepare() created the schema: a run that then commits no window drops it again. */
  private createdSchema = false

  private constructor(
    private readonly pool: SQL,
    private readonly sql: ReservedSQL,
    private readonly location: PostgresLocation,
    private readonly lockTimeoutSeconds: number,
  ) {
    this.tickets = `"${location.schema}".tickets`
    this.state_ = `"${location.schema}"._sync_state`
  }

  get description(): string {
    return this.location.description
  }

  /**
   * Connects and takes the schema's run lock; prepare() creates the schema and its tables.
   * Everything runs on one reserved connection: a window's COPY, upsert and state in one
   * transaction on it, and the run lock, a session lock, held on it until close().
   */
  static async open(location: PostgresLocation, lockTimeoutSeconds: number): Promise<PostgresTarget> {
    // The first argument is a URL so that Bun reads no connection URL of its own from the
    // environment: with options alone it takes DATABASE_URL's fields (its password too) for
    // any left unset, and would send another server's password here.
    const pool = new SQL(`postgresql://${location.hostname.includes(':') ? `[${location.hostname}]` : location.hostname}:${location.port}`, {
      adapter: 'postgres',
      username: location.username,
      password: location.password ?? '',
      database: location.database,
      tls: tlsOption(location),
      connection: { application_name: 'queue-analytics sync' },
      max: 1,
      connectionTimeout: 15,
    })
    let sql: ReservedSQL | undefined
    try {
      sql = await pool.reserve()
      // A lock held elsewhere (a CREATE INDEX, a LOCK TABLE) is waited for this long, not for ever.
      await sql.unsafe(`SET lock_timeout = '${Math.round(lockTimeoutSeconds * 1000)}ms'`)
      await takeRunLock(sql, location.schema)
      return new PostgresTarget(pool, sql, location, lockTimeoutSeconds)
    } catch (error) {
      sql?.release()
      await pool.close().catch(() => undefined)
      throw error
    }
  }

  /** Creates the schema and its tables if needed, brings an earlier release's up to date, and gives --grant's role read access. */
  async prepare(): Promise<void> {
    const { location, lockTimeoutSeconds } = this
    const reserved = this.sql
    const s = `"${location.schema}"`
    // Wrong input is found before anything is created: nothing is left by a run that exits 2.
    if (location.grantTo && ((await reserved.unsafe('SELECT 1 FROM pg_roles WHERE rolname = $1', [location.grantTo])) as unknown[]).length === 0) {
      throw noSuchRole(location.grantTo)
    }
    const [schema] = (await reserved.unsafe('SELECT to_regnamespace($1) IS NULL AS missing', [`"${location.schema}"`])) as { missing: boolean }[]
    this.createdSchema = schema!.missing
    await withLockTimeout(reserved, location, lockTimeoutSeconds, () => briefLocks(reserved, lockTimeoutSeconds, async (tx) => {
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${s}`)
      await tx.unsafe(`
        CREATE TABLE IF NOT EXISTS ${s}.locations (id TEXT PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS ${s}.queues (id TEXT PRIMARY KEY, location_id TEXT NOT NULL, name TEXT NOT NULL, slug TEXT NOT NULL, status TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS ${s}.tickets (
          ${TICKETS_COLUMNS_DDL},
          PRIMARY KEY (id)
        );
        CREATE TABLE IF NOT EXISTS ${s}._sync_state (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          base_url TEXT NOT NULL,
          since TIMESTAMPTZ NOT NULL,
          loaded_until TIMESTAMPTZ NOT NULL,
          backfill_until TIMESTAMPTZ,
          changes_token TEXT,
          last_run JSONB,
          reconcile_from TIMESTAMPTZ
        );`).simple()
      if (await shapeIsCurrent(tx, location.schema)) return
      await tx.unsafe(`
        ALTER TABLE ${s}.locations ADD COLUMN IF NOT EXISTS ${SYNCED_AT_DDL};
        ALTER TABLE ${s}.queues ADD COLUMN IF NOT EXISTS ${SYNCED_AT_DDL};
        ALTER TABLE ${s}.tickets ADD COLUMN IF NOT EXISTS ${SYNCED_AT_DDL};
        ALTER TABLE ${s}.locations ADD COLUMN IF NOT EXISTS time_zone TEXT;
        DROP VIEW IF EXISTS ${s}.ticket_details;
        ${ticketDetailsView((table) => `${s}.${table}`, (from, to) => `EXTRACT(EPOCH FROM (${to} - ${from}))::numeric(18, 3)`, (instant, zone) => `(${instant} AT TIME ZONE ${zone})`)};
        ${commentStatements((table) => `${s}.${table}`).join(';\n')};`).simple()
    }))
    if (location.grantTo) await withLockTimeout(reserved, location, lockTimeoutSeconds, () => briefLocks(reserved, lockTimeoutSeconds, (tx) => grantReadAccess(tx, s, location.grantTo!)))
  }

  async locationIds(): Promise<string[]> {
    return this.guarded(() => this.readLocationIds())
  }

  async queueIds(): Promise<string[]> {
    return this.guarded(async () => {
      const [exists] = (await this.sql.unsafe('SELECT to_regclass($1) IS NOT NULL AS present', [`"${this.location.schema}".queues`])) as { present: boolean }[]
      if (!exists!.present) return []
      return ((await this.sql.unsafe(`SELECT id FROM "${this.location.schema}".queues`)) as { id: string }[]).map((row) => row.id)
    })
  }

  async ticketCount(): Promise<number> {
    return this.guarded(async () => {
      const [exists] = (await this.sql.unsafe('SELECT to_regclass($1) IS NOT NULL AS present', [this.tickets])) as { present: boolean }[]
      if (!exists!.present) return 0
      return Number(((await this.sql.unsafe(`SELECT count(*) AS n FROM ${this.tickets}`)) as { n: string }[])[0]!.n)
    })
  }

  private async readLocationIds(): Promise<string[]> {
    const [exists] = (await this.sql.unsafe('SELECT to_regclass($1) IS NOT NULL AS present', [`"${this.location.schema}".locations`])) as { present: boolean }[]
    if (!exists!.present) return []
    return ((await this.sql.unsafe(`SELECT id FROM "${this.location.schema}".locations`)) as { id: string }[]).map((row) => row.id)
  }

  async state(): Promise<SyncState | null> {
    return this.guarded(() => this.readState())
  }

  private async readState(): Promise<SyncState | null> {
    // Read before prepare(): the schema and its tables may not exist yet.
    const [exists] = (await this.sql.unsafe('SELECT to_regclass($1) IS NOT NULL AS present', [this.state_])) as { present: boolean }[]
    if (!exists!.present) return null
    const rows = (await this.sql.unsafe(
      `SELECT base_url, since, loaded_until, backfill_until, changes_token, reconcile_from, last_run FROM ${this.state_} WHERE id = 1`,
    )) as Record<string, unknown>[]
    const row = rows[0]
    if (!row) return null
    const ms = (value: unknown) => (value === null ? null : (value as Date).getTime())
    return {
      baseUrl: String(row.base_url),
      since: ms(row.since)!,
      loadedUntil: ms(row.loaded_until)!,
      backfillUntil: ms(row.backfill_until),
      changesToken: (row.changes_token as string | null) ?? null,
      reconcileFrom: ms(row.reconcile_from),
      // An earlier version stored the summary as a JSON string; it is an object now.
      lastRun: typeof row.last_run === 'string' ? JSON.parse(row.last_run) : (row.last_run ?? null),
    }
  }

  async saveState(state: SyncState): Promise<void> {
    await this.guarded(() => this.writeState(this.sql, state))
  }

  private async writeState(sql: SQL, state: SyncState): Promise<void> {
    const at = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
    await sql.unsafe(
      `INSERT INTO ${this.state_} (id, base_url, since, loaded_until, backfill_until, changes_token, reconcile_from, last_run)
       VALUES (1, $1, $2, $3, $4, $5, $6, $7::text::jsonb)
       ON CONFLICT (id) DO UPDATE SET base_url = excluded.base_url, since = excluded.since, loaded_until = excluded.loaded_until,
         backfill_until = excluded.backfill_until, changes_token = excluded.changes_token, reconcile_from = excluded.reconcile_from,
         last_run = excluded.last_run`,
      [state.baseUrl, at(state.since), at(state.loadedUntil), at(state.backfillUntil), state.changesToken, at(state.reconcileFrom),
        state.lastRun === null ? null : JSON.stringify(state.lastRun)],
    )
  }

  /**
   * COPY streams the export into a temporary table as it downloads (the download and the
   * server's parsing overlap); one upsert by id then writes the new and the changed rows, and
   * the state is saved, before the one COMMIT.
   */
  async loadWindow(load: WindowLoad): Promise<RowCount> {
    return this.guarded(() => this.sql.begin(async (tx) => {
      const count = noRows()
      // Into an empty table (a first run's first window) the export is copied straight in: one
      // export holds each id once, so there is nothing to upsert. The transaction still hides it
      // from readers until it is whole.
      const [table] = (await tx.unsafe(`SELECT NOT EXISTS (SELECT 1 FROM ${this.tickets}) AS empty`)) as { empty: boolean }[]
      if (table!.empty && !load.reconcile && !load.demo) {
        const copy = tx.unsafe(`COPY ${this.tickets} (${columnList()}) FROM STDIN (FORMAT csv, HEADER true)`)
        await load.csv.pipeTo(copy.writable())
        count.inserted = (await copy).count
        count.deleted += await this.deleteIds(tx as unknown as SQL, load)
        await this.writeState(tx as unknown as SQL, load.state)
        return count
      }
      const csvColumns = [...TICKET_COLUMNS.map((c) => c.name), ...(load.demo ? ['demo'] : [])]
      await tx.unsafe(
        `CREATE TEMP TABLE _incoming (${TICKETS_COLUMNS_DDL}${load.demo ? ', demo INTEGER' : ''}) ON COMMIT DROP`,
      )
      const copy = tx.unsafe(`COPY _incoming (${csvColumns.join(', ')}) FROM STDIN (FORMAT csv, HEADER true)`)
      await load.csv.pipeTo(copy.writable())
      await copy
      const changed = (await tx.unsafe(
        `WITH upserted AS (
           INSERT INTO ${this.tickets} AS t (${columnList()}) SELECT ${columnList()} FROM _incoming
           ON CONFLICT (id) DO UPDATE SET ${TICKET_COLUMNS.filter((c) => c.name !== 'id').map((c) => `${c.name} = excluded.${c.name}`).join(', ')}, _synced_at = now()
           WHERE ${rowsDiffer('t', 'excluded')}
           RETURNING (xmax = 0) AS inserted
         ) SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated FROM upserted`,
      )) as { inserted: string | number; updated: string | number }[]
      count.inserted = Number(changed[0]!.inserted)
      count.updated = Number(changed[0]!.updated)
      if (load.reconcile) {
        const absent = `FROM ${this.tickets} AS t WHERE t.created_at >= $1 AND t.created_at < $2
             AND NOT EXISTS (SELECT 1 FROM _incoming i WHERE i.id = t.id)`
        const range = [new Date(load.reconcile.fromMs).toISOString(), new Date(load.reconcile.toMs).toISOString()]
        const [would] = (await tx.unsafe(`SELECT count(*) AS n ${absent}`, range)) as { n: string }[]
        if (Number(would!.n) > (load.maxDeletes ?? Infinity)) {
          const [all] = (await tx.unsafe(`SELECT count(*) AS n FROM ${this.tickets}`)) as { n: string }[]
          throw new TooManyDeletesError('tickets', Number(would!.n), Number(all!.n), true)
        }
        const deleted = await tx.unsafe(`DELETE ${absent}`, range)
        count.deleted = deleted.count
      }
      count.deleted += await this.deleteIds(tx as unknown as SQL, load)
      await this.writeState(tx as unknown as SQL, load.state)
      return count
    }))
  }

  /** A changes window's deletes (the change feed's), in its transaction; how many rows went. */
  private async deleteIds(tx: SQL, load: WindowLoad): Promise<number> {
    const ids = load.deletions ? await load.deletions() : null
    if (!ids || ids.length === 0) return 0
    return (await tx.unsafe(`DELETE FROM ${this.tickets} WHERE id IN (SELECT json_array_elements_text($1::text::json))`, [JSON.stringify(ids)])).count
  }

  /** `work`, with a lock timeout said as which session held the lock. */
  private guarded<T>(work: () => Promise<T>): Promise<T> {
    return withLockTimeout(this.sql, this.location, this.lockTimeoutSeconds, work)
  }

  async upsertStructure(locations: readonly Location[], deleteAbsent: boolean): Promise<{ locations: RowCount; queues: RowCount }> {
    const structure = structureRows(locations)
    const s = `"${this.location.schema}"`
    const zones = zonesOf(locations)
    if (zones.length > 0) {
      const known = (await this.guarded(() => this.sql.unsafe(`SELECT name FROM pg_timezone_names WHERE name IN (${zones.map((_, i) => `$${i + 1}`).join(', ')})`, zones))) as { name: string }[]
      checkZonesKnown(locations, new Set(known.map((row) => row.name)), 'PostgreSQL')
    }
    return this.guarded(() => this.sql.begin(async (tx) => {
      /** New rows inserted, rows that differ updated (a new `_synced_at`), the same ones left be; with `deleteAbsent`, the rest deleted. */
      const upsert = async (table: 'locations' | 'queues', rows: (string | null)[][]): Promise<RowCount> => {
        const columns = STRUCTURE_COLUMNS[table]
        const count = noRows()
        for (const row of rows) {
          const params = row.map((_, i) => `$${i + 1}`).join(', ')
          const set = columns.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')
          const differs = columns.slice(1).map((c) => `t.${c} IS DISTINCT FROM excluded.${c}`).join(' OR ')
          const [result] = (await tx.unsafe(
            `INSERT INTO ${s}.${table} AS t (${columns.join(', ')}) VALUES (${params})
             ON CONFLICT (id) DO UPDATE SET ${set}, _synced_at = now() WHERE ${differs} RETURNING (xmax = 0) AS inserted`,
            row,
          )) as { inserted: boolean }[]
          if (result?.inserted) count.inserted++
          else if (result) count.updated++
        }
        if (deleteAbsent) {
          const keep = rows.length === 0 ? '' : `WHERE id NOT IN (${rows.map((_, i) => `$${i + 1}`).join(', ')})`
          count.deleted = (await tx.unsafe(`DELETE FROM ${s}.${table} ${keep}`, rows.map((row) => row[0]!))).count
        }
        return count
      }
      return {
        // Queues first: each table counts its own rows.
        queues: await upsert('queues', structure.queues),
        locations: await upsert('locations', structure.locations),
      }
    }))
  }

  /**
   * The indexes are built once the rows are in, not kept up to date row by row during a first
   * run's load: one sort per index costs a fraction of that. Only the missing ones are built (a
   * build takes a lock that holds up writers, never readers).
   */
  async completeRun(): Promise<void> {
    const present = new Set(
      ((await this.sql.unsafe('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [this.location.schema, 'tickets'])) as { indexname: string }[]).map(
        (row) => row.indexname,
      ),
    )
    for (const [name, columns] of Object.entries(TICKET_INDEXES)) {
      if (!present.has(name)) await this.guarded(() => this.sql.unsafe(`CREATE INDEX IF NOT EXISTS ${name} ON ${this.tickets} (${columns})`))
    }
  }

  async discardIfEmpty(): Promise<void> {
    if (!this.createdSchema || (await this.state()) !== null) return
    await this.sql.unsafe(`DROP SCHEMA "${this.location.schema}" CASCADE`)
  }

  abandon(): void {
    // Nothing on disk here: the server rolls back the open transaction when the connection drops.
  }

  async close(): Promise<void> {
    // Let go of the run lock at once: a closed connection's session ends a moment later, when
    // the server has noticed, and the next run (a cron job's, a --reconcile right after) may
    // already be asking.
    await this.sql.unsafe('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [runLockKey(this.location.schema)]).catch(() => undefined)
    this.sql.release()
    await this.pool.close()
  }
}

/**
 * One run at a time into a schema: two at once (an hourly sync that overruns into the next, or
 * into a weekly --reconcile) would interleave their windows, and a reconcile could delete a
 * ticket the other run had just added after its own read. A session-level advisory lock, keyed
 * by the schema's name, in this database. A second run ends at once, having changed nothing.
 */
async function takeRunLock(sql: ReservedSQL, schema: string): Promise<void> {
  const key = runLockKey(schema)
  // A run that has just ended may still hold the lock for a moment (its backend goes on after
  // the client has gone, and a killed client's until the server notices): wait a few seconds
  // before calling the schema busy.
  for (const deadline = Date.now() + RUN_LOCK_WAIT_MS; ; await Bun.sleep(100)) {
    const [taken] = (await sql.unsafe('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [key])) as { locked: boolean }[]
    if (taken!.locked) return
    if (Date.now() >= deadline) break
  }
  const [holder] = (await sql.unsafe(
    `SELECT l.pid, a.backend_start FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
    [key],
  )) as { pid: number; backend_start: Date | null }[]
  const who = holder ? ` (PostgreSQL backend ${holder.pid}${holder.backend_start ? `, connected since ${holder.backend_start.toISOString()}` : ''})` : ''
  throw new TargetBusyError(`another sync is writing into schema ${schema}${who}; this run changed nothing: run it again when that one has ended`)
}

/** How long a run waits for the schema's lock before it gives up. */
const RUN_LOCK_WAIT_MS = 5000

/** The text whose hash keys a schema's run lock; the tests take the same lock. */
export function runLockKey(schema: string): string {
  return `queue-analytics sync into ${schema}`
}

/** The indexes of `tickets`, for time ranges and per queue or location (DuckDB has none: its zone maps serve these reads). */
const TICKET_INDEXES: Record<string, string> = {
  tickets_created_at_idx: 'created_at',
  tickets_queue_id_created_at_idx: 'queue_id, created_at',
  tickets_location_id_created_at_idx: 'location_id, created_at',
}

/** How long one attempt of prepare()'s DDL waits for a lock: every reader that queues behind it waits at most this long. */
const BRIEF_LOCK_TIMEOUT_MS = 1000

/**
 * `work` in one transaction whose locks are waited for a second at a time, retried until
 * `seconds` have passed. An ALTER TABLE waiting for a reader's open transaction makes every new
 * reader queue behind it: waiting the whole --timeout would block them all that long, a second
 * at a time lets them through between attempts.
 */
async function briefLocks<T>(sql: ReservedSQL, seconds: number, work: (tx: SQL) => Promise<T>): Promise<T> {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    try {
      return await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL lock_timeout = '${Math.min(BRIEF_LOCK_TIMEOUT_MS, seconds * 1000)}ms'`)
        return work(tx as unknown as SQL)
      })
    } catch (error) {
      if (sqlState(error) !== '55P03' || Date.now() + BRIEF_LOCK_TIMEOUT_MS > deadline) throw error
      await Bun.sleep(200)
    }
  }
}

/**
 * Whether the schema already has this release's shape (`_synced_at` everywhere, the view with
 * its current comment, its waits as numeric(18,3) and its columns commented). Only then is the upgrade skipped: its
 * ALTER TABLE takes an exclusive lock even when there is nothing to add, which would wait for
 * every reader's open transaction and make every later reader wait behind it. (The view is
 * dropped before it is made again: CREATE OR REPLACE cannot change a column's type.)
 */
async function shapeIsCurrent(tx: SQL, schema: string): Promise<boolean> {
  const s = `"${schema}"`
  const [row] = (await tx.unsafe(
    `SELECT (SELECT count(*) FROM pg_attribute WHERE attname = '_synced_at' AND NOT attisdropped
               AND attrelid IN (to_regclass($1), to_regclass($2), to_regclass($3))) = 3
        AND obj_description(to_regclass($4), 'pg_class') IS NOT DISTINCT FROM $5
        AND (SELECT format_type(atttypid, atttypmod) = 'numeric(18,3)' AND col_description(attrelid, attnum) IS NOT NULL
               FROM pg_attribute WHERE attrelid = to_regclass($4) AND attname = 'wait_seconds') AS current`,
    [`${s}.locations`, `${s}.queues`, `${s}.tickets`, `${s}.ticket_details`, TICKET_DETAILS_COMMENT],
  )) as { current: boolean }[]
  return row!.current
}

/**
 * `--grant ROLE`: the role may read the schema, tables and views `sync` creates later included
 * (default privileges of the user sync connects as, who creates them). A role that does not
 * exist is wrong input.
 */
async function grantReadAccess(tx: SQL, schema: string, role: string): Promise<void> {
  try {
    await tx.unsafe(`GRANT USAGE ON SCHEMA ${schema} TO "${role}"`)
  } catch (error) {
    if (sqlState(error) === '42704') throw noSuchRole(role)
    throw error
  }
  await tx.unsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO "${role}"`)
  await tx.unsafe(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT ON TABLES TO "${role}"`)
}

function noSuchRole(role: string): SyncInputError {
  return new SyncInputError(`--grant ${role}: there is no such role in this PostgreSQL (create it first: CREATE ROLE ${role} LOGIN)`)
}

/** The SQLSTATE of an error Bun's client passes on from the server. */
function sqlState(error: unknown): string | undefined {
  const { errno, code } = error as { errno?: unknown; code?: unknown }
  return [errno, code].find((value): value is string => typeof value === 'string' && /^[0-9A-Z]{5}$/.test(value))
}

/**
 * Runs `work`; a lock that another session held past `lock_timeout` (SQLSTATE 55P03) becomes a
 * LockTimeoutError naming that session, so that whoever reads the line knows what to end.
 */
async function withLockTimeout<T>(sql: ReservedSQL, location: PostgresLocation, seconds: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (sqlState(error) !== '55P03') throw error
    const holders = await lockHolders(sql as unknown as SQL, location.schema).catch(() => [])
    const who = holders.length > 0 ? holders.join('; ') : 'another session'
    throw new LockTimeoutError(
      `a lock on schema ${location.schema} was held for longer than --timeout (${seconds} s) by PostgreSQL ${who}; what this run was writing was rolled back`,
    )
  }
}
