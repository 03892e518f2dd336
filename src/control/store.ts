import { Database, type Statement } from 'bun:sqlite'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { and, asc, eq, getTableColumns, lt, or, sql } from 'drizzle-orm'
import { join } from 'node:path'
import { rmSync, statSync } from 'node:fs'
import { LRUCache } from 'lru-cache'
import { ensurePrivateDirectory, openReadOnlyCopy, openWritableDatabase, ReadOnlyCopyError } from '../db/files.ts'
import { ApiError } from '../errors/api-error.ts'
import { migrate, schemaVersion } from '../db/migrator.ts'
import { CONTROL_MIGRATIONS } from './migrations.ts'
import { slugProblem } from './slug.ts'
import * as schema from './schema.ts'
import { apiTokens, demoQuotaUsage, organisations, serviceSettings } from './schema.ts'
import { newId } from '../ids.ts'
import { displayPrefix, generateToken, hashToken, randomBase62 } from '../auth/token.ts'
import type { TokenLookup } from '../auth/authenticate.ts'

export type Plan = 'demo' | 'paid'
export type Organisation = typeof organisations.$inferSelect
export type ApiTokenRecord = Omit<typeof apiTokens.$inferSelect, 'tokenHash'>


/** Every token column but the hash, which never leaves the store. */
const { tokenHash: _tokenHash, ...TOKEN_COLUMNS } = getTableColumns(apiTokens)

export class ControlStoreError extends Error {}

/** How long opening and migrating waits for another process's write lock (the admin CLI, another server). */
const OPEN_BUSY_TIMEOUT_MS = 5000

export interface ControlStoreOptions {
  /**
   * How long a write blocks waiting for another process's lock. bun:sqlite is synchronous, so in
   * the server this blocks the event loop: the server uses a few milliseconds and retries
   * asynchronously (see DemoQuota); the admin CLI may simply wait.
   * @default 5000
   */
  busyTimeoutMs?: number
  /**
   * Never write the file nor beside it (READ_ONLY=1, a replica's copy): opened read-only, not
   * migrated, no cursor key made, and a WAL-mode file refused (reading one creates its -shm).
   * @default false
   */
  readOnly?: boolean
}

/** SQLITE_BUSY / SQLITE_LOCKED: another process holds the write lock right now. */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
}

/**
 * SQLite failures that mean the file itself cannot be read (corrupt, not a database, gone,
 * moved): answered 503 and the connection dropped, so that the next request opens the file again.
 */
const FILE_FAILURE = /^SQLITE_(CORRUPT|NOTADB|IOERR|CANTOPEN|READONLY_DBMOVED)/

function isControlFileFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && FILE_FAILURE.test(code)
}

/**
 * The 503 of a control store that cannot be read (the same answer /readyz gives): the body is a
 * tenant file's (data_unavailable), the class tells the two apart for the metrics.
 */
export class ControlStoreUnavailableError extends ApiError {
  constructor() {
    super('data_unavailable', 'The service cannot read its own data right now; try again shortly.')
  }
}

/**
 * Which file lies at a path (dev:inode) and which state of it (size:mtime), or null when none
 * does. A new `file` is a file put there by rename; a new `state` of the same file is a write,
 * ours, another process's, or a copy over it.
 */
interface FileIdentity {
  file: string
  state: string
}

function fileIdentity(path: string): FileIdentity | null {
  const stat = statSync(path, { throwIfNoEntry: false, bigint: true })
  return stat ? { file: `${stat.dev}:${stat.ino}`, state: `${stat.size}:${stat.mtimeNs}` } : null
}

function sameFile(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return a !== null && b !== null && a.file === b.file
}

function unchanged(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return sameFile(a, b) && a!.state === b!.state
}

/** One open connection to control.sqlite and the statements prepared on it. */
class ControlConnection {
  readonly orm: BunSQLiteDatabase<typeof schema>
  readonly lookup: Statement
  readonly dataVersion: Statement
  readonly consumeQuota: Statement
  readonly quotaCount: Statement

  constructor(readonly db: Database) {
    this.orm = drizzle({ client: db, schema })
    // Hot paths: plain prepared statements, parsed once.
    this.lookup = db.prepare(
      `SELECT t.id AS tokenId, t.organisation_id AS organisationId, t.revoked_at IS NOT NULL AS revoked,
              o.plan AS plan, o.api_enabled AS apiEnabled
         FROM api_tokens t JOIN organisations o ON o.id = t.organisation_id
        WHERE t.token_hash = ?`,
    )
    this.dataVersion = db.prepare('PRAGMA data_version')
    // One statement, so concurrent processes cannot lose an update: the row is incremented only
    // while under the limit, and RETURNING tells whether this request got a slot.
    this.consumeQuota = db.prepare(
      `INSERT INTO demo_quota_usage (organisation_id, day, count) VALUES (?1, ?2, 1)
       ON CONFLICT (organisation_id, day) DO UPDATE SET count = count + 1 WHERE count < ?3
       RETURNING count`,
    )
    this.quotaCount = db.prepare('SELECT count FROM demo_quota_usage WHERE organisation_id = ? AND day = ?')
  }

  close(): void {
    for (const statement of [this.lookup, this.dataVersion, this.consumeQuota, this.quotaCount]) statement.finalize()
    this.db.close(false)
  }
}

/**
 * `DATA_DIR/control.sqlite`: organisations, API tokens, demo-quota counters and service
 * settings. Migrated when opened, by the server and by the admin CLI alike. Shared by every
 * process on the same data directory, so every counter lives in SQL, not in memory.
 *
 * The file may be replaced while the server runs (a restore by copy and rename: a new inode) or
 * broken in place: every use first compares the file's identity (one stat) with the one opened
 * and opens the file again when it changed, so a token revoked in a restored file is refused on
 * the very next request. A file that cannot be read answers 503 until a good one is put back.
 */
export class ControlStore {
  /** The file's schema version before this store migrated it (what `admin migrate` reports). */
  readonly schemaVersionAtOpen: number
  private readonly path: string
  private readonly busyTimeoutMs: number
  readonly readOnly: boolean
  private connection: ControlConnection | undefined
  private openedIdentity: FileIdentity | null = null
  /** The WAL and its index beside the file that was opened: the old file's, once another file lies there. */
  private openedWal: FileIdentity | null = null
  private openedShm: FileIdentity | null = null
  /**
   * Active tokens seen recently, by hash. Valid while no other connection has committed to this
   * file (PRAGMA data_version, a few microseconds; an indexed look-up measured about ten times
   * that on the request path) and emptied by this store's own writes to tokens and organisations
   * and by a reopen. So a revocation by the admin CLI, another process, still counts on the very
   * next request.
   */
  private readonly activeTokens = new LRUCache<string, TokenLookup>({ max: 10_000 })
  private seenDataVersion = -1

  constructor(readonly dataDir: string, options: ControlStoreOptions = {}) {
    this.readOnly = options.readOnly ?? false
    this.path = join(dataDir, 'control.sqlite')
    this.busyTimeoutMs = options.busyTimeoutMs ?? OPEN_BUSY_TIMEOUT_MS
    if (this.readOnly) {
      this.connection = this.prepare(this.openCopy())
      this.schemaVersionAtOpen = CONTROL_MIGRATIONS.length
      if (!readCursorSigningKey(this.connection.orm)) {
        this.close()
        throw new ControlStoreError(`${this.path} holds no cursor signing key: start the service once on the writer before copying the file`)
      }
      return
    }
    ensurePrivateDirectory(dataDir)
    const db = openWritableDatabase(this.path, OPEN_BUSY_TIMEOUT_MS)
    this.schemaVersionAtOpen = schemaVersion(db)
    this.connection = this.prepare(db)
    // Made while opening waits long for the write lock: the workers of WORKERS=N start together
    // and would otherwise race to create it under the server's short busy timeout. On this very
    // connection, not through current(): another process's write since the open changes the
    // file's identity, and current() would close `db` under the next line.
    ensureCursorSigningKey(this.connection.orm)
    db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`)
  }

  /** The current connection (reopened if the file changed); for the admin CLI and /readyz. */
  get db(): Database {
    return this.current().db
  }

  get orm(): BunSQLiteDatabase<typeof schema> {
    return this.current().orm
  }

  close(): void {
    this.connection?.close()
    this.connection = undefined
  }

  /** Migrates a freshly opened file and prepares the statements on it; closes it on failure. */
  private prepare(db: Database): ControlConnection {
    try {
      if (this.readOnly) requireCurrentSchema(db, this.path)
      else migrate(db, CONTROL_MIGRATIONS)
      const connection = new ControlConnection(db)
      this.openedIdentity = fileIdentity(this.path)
      this.openedWal = fileIdentity(`${this.path}-wal`)
      this.openedShm = fileIdentity(`${this.path}-shm`)
      return connection
    } catch (error) {
      db.close(false)
      throw error
    }
  }

  /**
   * The connection to the file now at the path. A changed identity (another file, or this one
   * written outside SQLite) or an earlier failure opens it again; a missing file is never
   * created here (that is a restore half done), it is unavailable. Throws the 503 when the file
   * cannot be read.
   *
   * A new inode is a file restored by rename; a changed size or mtime on the same inode may be a
   * restore by copy over it, which a connection would not notice either, so it too reopens.
   * Ordinary writes change them as well (a WAL checkpoint every thousand pages or so): the cost
   * is then a reopen and an empty token cache now and then, which buys never serving from a file
   * that is no longer the one on disk.
   */
  private current(): ControlConnection {
    const identity = fileIdentity(this.path)
    if (this.connection && unchanged(identity, this.openedIdentity)) return this.connection
    // Inside a transaction the connection stays: closing it would break the caller's work half
    // way ("Database has closed"). Another process's checkpoint changes the file's mtime while
    // this one holds the write lock; a real restore is noticed once the transaction ends.
    if (this.connection?.db.inTransaction) return this.connection
    const replaced = !sameFile(identity, this.openedIdentity)
    if (this.connection) {
      // Taking the old connection out of WAL mode writes the old file's log into the old file and
      // deletes it, before the new file is opened (it must not read another file's log). It also
      // keeps the old connection, once really closed, from deleting the new file's WAL: drizzle's
      // statements are finalized by the garbage collector, and SQLite closes after them.
      if (replaced && !this.readOnly) {
        try {
          this.connection.db.exec('PRAGMA journal_mode = DELETE')
        } catch {
          // The old file is unreadable, or another process still has it open (below).
        }
      }
      this.connection.close()
      this.connection = undefined
    }
    if (replaced && !this.readOnly) this.moveOldLogAside()
    this.activeTokens.clear()
    this.seenDataVersion = -1
    if (identity === null) throw new ControlStoreUnavailableError()
    try {
      this.connection = this.prepare(this.readOnly ? this.openCopy() : this.openExisting())
      return this.connection
    } catch (error) {
      // A copy of another schema version or in WAL mode (READ_ONLY=1) cannot be served either.
      if (isControlFileFailure(error) || error instanceof ControlStoreError) throw new ControlStoreUnavailableError()
      throw error
    }
  }

  /**
   * The WAL and its index beside a replaced file, when they are still the old file's (another
   * process, a worker that has not yet noticed the new file, kept them): removed, so that the
   * new file starts without them. That process keeps the copies it has open, and notices the
   * new file on its next request. A log made for the new file since is another file: kept.
   */
  private moveOldLogAside(): void {
    for (const [suffix, opened] of [['-wal', this.openedWal], ['-shm', this.openedShm]] as const) {
      if (sameFile(fileIdentity(this.path + suffix), opened)) rmSync(this.path + suffix, { force: true })
    }
  }

  /** Opens the file at the path, never creating one: an empty file is a copy still under way. */
  private openExisting(): Database {
    const db = new Database(this.path, { readwrite: true, create: false, strict: true })
    try {
      db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`)
      if (schemaVersion(db) === 0) throw Object.assign(new Error('control.sqlite is empty'), { code: 'SQLITE_NOTADB' })
      db.exec('PRAGMA journal_mode = WAL')
      db.exec('PRAGMA synchronous = NORMAL')
      db.exec('PRAGMA foreign_keys = ON')
      return db
    } catch (error) {
      db.close(false)
      throw error
    }
  }

  /** Opens a read-only copy; ControlStoreError names what is wrong with it (missing, WAL mode). */
  private openCopy(): Database {
    let db: Database
    try {
      db = openReadOnlyCopy(this.path)
    } catch (error) {
      throw error instanceof ReadOnlyCopyError ? new ControlStoreError(error.message) : error
    }
    db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`)
    return db
  }

  /**
   * Runs a read or write of the request path: a failure of the file itself drops the
   * connection (the next use opens the file again) and becomes the 503.
   */
  private use<T>(work: (connection: ControlConnection) => T): T {
    const connection = this.current()
    try {
      return work(connection)
    } catch (error) {
      if (!isControlFileFailure(error)) throw error
      if (this.connection === connection) {
        connection.close()
        this.connection = undefined
      }
      throw new ControlStoreUnavailableError()
    }
  }

  // ---- organisations -------------------------------------------------------------------------

  createOrganisation(input: { name: string; slug: string; plan: Plan; apiEnabled: boolean; createdAt: string }): Organisation {
    const problem = slugProblem(input.slug)
    if (problem !== undefined) throw new ControlStoreError(problem)
    if (this.findOrganisation(input.slug)) throw new ControlStoreError(`slug "${input.slug}" is already taken`)
    const organisation: Organisation = { id: newId('org'), ...input }
    this.orm.insert(organisations).values(organisation).run()
    return organisation
  }

  /** By id or slug. */
  findOrganisation(idOrSlug: string): Organisation | undefined {
    return this.orm
      .select()
      .from(organisations)
      .where(or(eq(organisations.id, idOrSlug), eq(organisations.slug, idOrSlug)))
      .get()
  }

  listOrganisations(): Organisation[] {
    return this.orm.select().from(organisations).orderBy(asc(organisations.createdAt), asc(organisations.id)).all()
  }

  updateOrganisation(id: string, changes: { plan?: Plan; apiEnabled?: boolean }): Organisation {
    if (Object.keys(changes).length > 0) this.orm.update(organisations).set(changes).where(eq(organisations.id, id)).run()
    this.activeTokens.clear()
    return this.findOrganisation(id)!
  }

  // ---- tokens --------------------------------------------------------------------------------

  /** Creates a token and returns its plaintext: the only time it exists outside its owner. */
  createToken(input: { organisationId: string; name: string; createdAt: string }): { record: ApiTokenRecord; token: string } {
    const token = generateToken()
    const record: ApiTokenRecord = {
      id: newId('tok'),
      organisationId: input.organisationId,
      name: input.name,
      displayPrefix: displayPrefix(token),
      createdAt: input.createdAt,
      lastUsedAt: null,
      revokedAt: null,
    }
    this.orm.insert(apiTokens).values({ ...record, tokenHash: hashToken(token) }).run()
    return { record, token }
  }

  listTokens(organisationId: string): ApiTokenRecord[] {
    return this.orm
      .select(TOKEN_COLUMNS)
      .from(apiTokens)
      .where(eq(apiTokens.organisationId, organisationId))
      .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id))
      .all()
  }

  findToken(id: string): ApiTokenRecord | undefined {
    return this.orm.select(TOKEN_COLUMNS).from(apiTokens).where(eq(apiTokens.id, id)).get()
  }

  /** Revokes a token; revoking twice keeps the first revocation time. */
  revokeToken(id: string, at: string): ApiTokenRecord | undefined {
    this.orm
      .update(apiTokens)
      .set({ revokedAt: sql`coalesce(${apiTokens.revokedAt}, ${at})` })
      .where(eq(apiTokens.id, id))
      .run()
    this.activeTokens.clear()
    return this.findToken(id)
  }

  /**
   * The token with this SHA-256 hash, revoked or not. Active tokens come from memory while the
   * file is unchanged; unknown and revoked ones always cost one indexed look-up, the same work.
   */
  lookupToken(tokenHash: string): TokenLookup | undefined {
    return this.use((connection) => {
      const { data_version: dataVersion } = connection.dataVersion.get() as { data_version: number }
      if (dataVersion !== this.seenDataVersion) {
        this.activeTokens.clear()
        this.seenDataVersion = dataVersion
      }
      const cached = this.activeTokens.get(tokenHash)
      if (cached) return cached
      const row = connection.lookup.get(tokenHash) as
        | { tokenId: string; organisationId: string; revoked: number; plan: Plan; apiEnabled: number }
        | null
      if (!row) return undefined
      const found = { tokenId: row.tokenId, organisationId: row.organisationId, revoked: row.revoked === 1, plan: row.plan, apiEnabled: row.apiEnabled === 1 }
      if (!found.revoked) this.activeTokens.set(tokenHash, found)
      return found
    })
  }

  /** Writes batched `last used` times in one short transaction. */
  recordTokenUse(lastUsed: ReadonlyMap<string, string>): void {
    if (lastUsed.size === 0) return
    this.use(({ db, orm }) =>
      db.transaction(() => {
        for (const [id, at] of lastUsed) {
          orm
            .update(apiTokens)
            .set({ lastUsedAt: at })
            .where(and(eq(apiTokens.id, id), or(sql`${apiTokens.lastUsedAt} IS NULL`, lt(apiTokens.lastUsedAt, at))))
            .run()
        }
      })(),
    )
  }

  // ---- demo quota ----------------------------------------------------------------------------

  /** Takes one request from the organisation's quota for `day` unless `limit` is reached. */
  consumeDemoQuota(organisationId: string, day: string, limit: number): { allowed: boolean; used: number } {
    const row = this.use((connection) => connection.consumeQuota.get(organisationId, day, limit)) as { count: number } | null
    if (row) return { allowed: true, used: row.count }
    return { allowed: false, used: this.demoQuotaUsed(organisationId, day) }
  }

  demoQuotaUsed(organisationId: string, day: string): number {
    const row = this.use((connection) => connection.quotaCount.get(organisationId, day)) as { count: number } | null
    return row?.count ?? 0
  }

  /** The newest day any process has counted a demo request on (YYYY-MM-DD), or '' when none. */
  latestDemoQuotaDay(): string {
    const row = this.use((connection) => connection.db.query('SELECT max(day) AS day FROM demo_quota_usage').get()) as { day: string | null }
    return row.day ?? ''
  }

  /** Drops counters of days before `day` (they can never be read again). */
  pruneDemoQuota(day: string): void {
    this.orm.delete(demoQuotaUsage).where(lt(demoQuotaUsage.day, day)).run()
  }

  // ---- settings ------------------------------------------------------------------------------

  /** The key that signs pagination cursors; created once, shared by every process on this data dir. */
  cursorSigningKey(): string {
    if (this.readOnly) return readCursorSigningKey(this.orm)!
    return ensureCursorSigningKey(this.orm)
  }
}

/** A read-only copy cannot be migrated: it must come from a writer that runs this version. */
function requireCurrentSchema(db: Database, path: string): void {
  const version = schemaVersion(db)
  if (version !== CONTROL_MIGRATIONS.length) {
    throw new ControlStoreError(`${path} is at schema version ${version}, this program needs ${CONTROL_MIGRATIONS.length}: run admin migrate on the writer`)
  }
}

function readCursorSigningKey(orm: BunSQLiteDatabase<typeof schema>): string | undefined {
  return orm.select().from(serviceSettings).where(eq(serviceSettings.key, 'cursor_signing_key')).get()?.value
}

/** Reads the cursor signing key, creating it first when the file has none. */
function ensureCursorSigningKey(orm: BunSQLiteDatabase<typeof schema>): string {
  const read = () => readCursorSigningKey(orm)
  // Read first: once the key exists, starting a server needs no write lock (the admin CLI may hold it).
  const existing = read()
  if (existing) return existing
  orm
    .insert(serviceSettings)
    .values({ key: 'cursor_signing_key', value: randomBase62(43) })
    .onConflictDoNothing()
    .run()
  return read()!
}
