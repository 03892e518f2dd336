import type { Database, Statement } from 'bun:sqlite'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { and, asc, eq, getTableColumns, lt, or, sql } from 'drizzle-orm'
import { join } from 'node:path'
import { LRUCache } from 'lru-cache'
import { ensurePrivateDirectory, openReadOnlyCopy, openWritableDatabase, ReadOnlyCopyError } from '../db/files.ts'
import { migrate, schemaVersion } from '../db/migrator.ts'
import { CONTROL_MIGRATIONS } from './migrations.ts'
import { ControlFile } from './control-file.ts'
import { slugProblem } from './slug.ts'
import * as schema from './schema.ts'
import { apiTokens, demoQuotaUsage, organisations, serviceSettings } from './schema.ts'
import { displayPrefix, generateToken, hashToken, randomBase62 } from '../auth/token.ts'
import type { TokenLookup } from '../auth/authenticate.ts'

export type Plan = 'demo' | 'paid'
export type Organisation = typeof organisations.$inferSelect
export type ApiTokenRecord = Omit<typeof apiTokens.$inferSelect, 'tokenHash'>


/** Every token column but the hash, which never leaves the store. */
const { tokenHash: _tokenHash, ...TOKEN_COLUMNS } = getTableColumns(apiTokens)

export class ControlStoreError extends Error {}

/** A new record's id: its type's prefix and 16 random base62 characters. */
function newId(prefix: 'org' | 'tok'): string {
  return `${prefix}_${randomBase62(16)}`
}

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
 * process on the same data directory, so every counter lives in SQL, not in memory. Every use
 * goes through the file as it lies on disk now (control-file.ts): a replaced file is reopened,
 * one that cannot be read throws ControlStoreUnavailableError until a good one is put back.
 */
export class ControlStore {
  /** The file's schema version before this store migrated it (what `admin migrate` reports). */
  readonly schemaVersionAtOpen: number
  private readonly file: ControlFile<ControlConnection>
  readonly readOnly: boolean
  /**
   * Active tokens seen recently, by hash (docs/decisions/0010-token-memory.md). Valid while no
   * other connection has committed to this file (PRAGMA data_version), emptied by this store's
   * own writes and by a reopen: a revocation by the admin CLI counts on the very next request.
   */
  private readonly activeTokens = new LRUCache<string, TokenLookup>({ max: 10_000 })
  private seenDataVersion = -1

  constructor(readonly dataDir: string, options: ControlStoreOptions = {}) {
    this.readOnly = options.readOnly ?? false
    const path = join(dataDir, 'control.sqlite')
    const busyTimeoutMs = options.busyTimeoutMs ?? OPEN_BUSY_TIMEOUT_MS
    this.file = new ControlFile(path, {
      busyTimeoutMs,
      readOnly: this.readOnly,
      openCopy: () => openCopy(path, busyTimeoutMs),
      prepare: (db) => {
        if (this.readOnly) requireCurrentSchema(db, path)
        else migrate(db, CONTROL_MIGRATIONS)
        return new ControlConnection(db)
      },
      isUnservable: (error) => error instanceof ControlStoreError,
      onReopen: () => {
        this.activeTokens.clear()
        this.seenDataVersion = -1
      },
    })
    if (this.readOnly) {
      const connection = this.file.adopt(openCopy(path, busyTimeoutMs))
      this.schemaVersionAtOpen = CONTROL_MIGRATIONS.length
      if (!readCursorSigningKey(connection.orm)) {
        this.close()
        throw new ControlStoreError(`${path} holds no cursor signing key: start the service once on the writer before copying the file`)
      }
      return
    }
    ensurePrivateDirectory(dataDir)
    const db = openWritableDatabase(path, OPEN_BUSY_TIMEOUT_MS)
    this.schemaVersionAtOpen = schemaVersion(db)
    const connection = this.file.adopt(db)
    // Made while opening waits long for the write lock: the workers of WORKERS=N start together
    // and would otherwise race to create it under the server's short busy timeout. On this very
    // connection, not through the file: another process's write since the open changes the
    // file's identity, and a reopen would close `db` under the next line.
    ensureCursorSigningKey(connection.orm)
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
  }

  /** The current connection (reopened if the file changed); for the admin CLI and /readyz. */
  get db(): Database {
    return this.file.current().db
  }

  get orm(): BunSQLiteDatabase<typeof schema> {
    return this.file.current().orm
  }

  close(): void {
    this.file.close()
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
    return this.file.use((connection) => {
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
    this.file.use(({ db, orm }) =>
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
    const row = this.file.use((connection) => connection.consumeQuota.get(organisationId, day, limit)) as { count: number } | null
    if (row) return { allowed: true, used: row.count }
    return { allowed: false, used: this.demoQuotaUsed(organisationId, day) }
  }

  demoQuotaUsed(organisationId: string, day: string): number {
    const row = this.file.use((connection) => connection.quotaCount.get(organisationId, day)) as { count: number } | null
    return row?.count ?? 0
  }

  /** The newest day any process has counted a demo request on (YYYY-MM-DD), or '' when none. */
  latestDemoQuotaDay(): string {
    const row = this.file.use((connection) => connection.db.query('SELECT max(day) AS day FROM demo_quota_usage').get()) as { day: string | null }
    return row.day ?? ''
  }

  /**
   * Commits a write that leaves nothing behind (a settings row added and removed in one
   * transaction, which still appends to the WAL): throws when control.sqlite takes no writes now
   * (a read-only file or directory, a full disk, a lock held too long). The demo quota's check
   * that a failing store recovered, without waiting for a demo request.
   */
  checkWritable(): void {
    this.file.use((connection) =>
      connection.db
        .transaction(() => {
          connection.db.run("INSERT OR REPLACE INTO service_settings (key, value) VALUES ('write_check', '')")
          connection.db.run("DELETE FROM service_settings WHERE key = 'write_check'")
        })
        .immediate(),
    )
  }

  /** Drops counters of days before `day` (they can never be read again). */
  /** Takes one counted request back from the organisation's day (never below zero), in one statement. */
  releaseDemoQuota(organisationId: string, day: string): number {
    const row = this.orm
      .update(demoQuotaUsage)
      .set({ count: sql`${demoQuotaUsage.count} - 1` })
      .where(and(eq(demoQuotaUsage.organisationId, organisationId), eq(demoQuotaUsage.day, day), sql`${demoQuotaUsage.count} > 0`))
      .returning({ count: demoQuotaUsage.count })
      .get()
    return row?.count ?? this.demoQuotaUsed(organisationId, day)
  }

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
/** Opens a replica's read-only copy; ControlStoreError names what is wrong with it (missing, WAL mode). */
function openCopy(path: string, busyTimeoutMs: number): Database {
  let db: Database
  try {
    db = openReadOnlyCopy(path)
  } catch (error) {
    throw error instanceof ReadOnlyCopyError ? new ControlStoreError(error.message) : error
  }
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
  return db
}

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
