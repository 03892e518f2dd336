import { constants, Database, SQLiteError, type Statement } from 'bun:sqlite'
import { lstatSync } from 'node:fs'
import { LRUCache } from 'lru-cache'
import type { Logger } from '../logger.ts'
import { schemaVersion } from '../db/migrator.ts'
import { openReadOnlyCopy } from '../db/files.ts'
import { openOwnFile, UntrustedFileError } from '../db/trusted-directory.ts'
import { TICKET_FIELDS } from '../contract/vocabulary.ts'
import { tickets } from './schema.ts'
import { hasContractTriggers, isServableTenantVersion } from './migrations.ts'
import { CONTRACT_TRIGGERS_PRESENT_SQL } from './row-check.ts'
import { tenantFilePath, isValidOrganisationId } from './paths.ts'
import { DamagedFileError, describeFileFailure, RowBreachError, TenantUnavailableError, type TenantFailureKind, type TenantLease, type TenantSchema } from './lease.ts'
import { TenantSnapshot } from './snapshot.ts'

/** One open, read-only connection to a tenant file, shared by every lease on it. */
class TenantHandle {
  leases = 0
  retired = false
  closed = false
  private readonly statements = new Map<string, Statement>()

  constructor(
    readonly organisationId: string,
    readonly db: Database,
    /** Identity of the file that was opened, to notice a file replaced under us. */
    readonly fileIdentity: string,
  ) {}

  /** A prepared statement cached on this connection (for the short, repeated page queries). */
  statement(sql: string): Statement {
    let statement = this.statements.get(sql)
    if (!statement) {
      statement = this.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    return statement
  }

  /** What the file said of itself when last read, and `PRAGMA data_version` then. */
  private schema: TenantSchema = { version: -1, rowsGuaranteed: false }
  private checkedDataVersion = -1
  /** Whether this lease's check already ran (a handle just opened); see TenantPool.openSnapshot. */
  schemaChecked = false

  /**
   * Re-reads the schema version and whether the file vouches for its rows, when another
   * connection has committed since the last read (data_version changes; the administration
   * application may migrate a file in place while it is open), and then also prepares a
   * statement naming every column of the contract that the API reads, which fails on a foreign
   * schema. Otherwise answers from what it read last. Throws the SQLite error of a file that
   * cannot be read.
   */
  recheckSchema(): TenantSchema {
    const dataVersion = (this.statement('PRAGMA data_version').get() as { data_version: number }).data_version
    if (dataVersion !== this.checkedDataVersion) {
      const version = schemaVersion(this.db)
      if (isServableTenantVersion(version)) this.db.prepare(SCHEMA_PROBE).finalize()
      // A version-4 file whose triggers were dropped by hand no longer vouches for its rows.
      const rowsGuaranteed = hasContractTriggers(version) && (this.statement(CONTRACT_TRIGGERS_PRESENT_SQL).get() as { present: number }).present === 1
      this.schema = { version, rowsGuaranteed }
      this.checkedDataVersion = dataVersion
    }
    return this.schema
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const statement of this.statements.values()) statement.finalize()
    this.statements.clear()
    this.db.close(false)
  }
}

export interface TenantPoolOptions {
  dataDir: string
  /** How many tenant files stay open when no lease holds them. */
  maxOpen: number
  logger: Logger
  /** Told each time a tenant file is opened (a new connection, not a lease of an open one). */
  onOpen?: () => void
  /**
   * READ_ONLY=1: open files without ever writing beside them (db/files.ts openReadOnlyCopy).
   * @default false
   */
  readOnly?: boolean
}

/**
 * Leased, reference-counted LRU pool of read-only tenant connections.
 *
 * The LRU bounds the handles kept open between requests. Eviction only *retires* a handle: the
 * last lease's release closes it, so a streaming export is never closed under itself, and the
 * number of open files stays at most `maxOpen` plus the leases in flight.
 */
export class TenantPool {
  private readonly cache: LRUCache<string, TenantHandle>
  /** Handles evicted from the cache but still leased. */
  private readonly retiredInUse = new Set<TenantHandle>()
  /** Last failure reason logged per organisation, so a broken file is logged once, not per request. */
  private readonly loggedFailures = new Map<string, string>()
  private leasesOut = 0

  constructor(private readonly options: TenantPoolOptions) {
    this.cache = new LRUCache<string, TenantHandle>({
      max: options.maxOpen,
      // Not a close: a handle may still be leased (see the class comment).
      dispose: (handle) => this.retire(handle),
    })
  }

  /**
   * Leases the organisation's shared tenant connection. Throws TenantUnavailableError.
   * `requestId` goes on the log line of a failure, so that an operator can join it to the 503.
   */
  acquire(organisationId: string, requestId?: string): TenantLease {
    return this.lease(this.openHandle(organisationId, requestId), requestId)
  }

  /**
   * One read of the organisation's file in one snapshot (a read transaction), as a
   * TenantSnapshot that owns the lease, the transaction and the statement it iterates; its
   * `close()` ends all three. `own`: on a connection of its own (see `acquireOwn`), for a long
   * read such as a CSV export. Throws TenantUnavailableError.
   */
  openSnapshot(organisationId: string, options: { requestId?: string; own?: boolean } = {}): TenantSnapshot {
    const { requestId, own = false } = options
    if (own) return new TenantSnapshot(this.acquireOwn(organisationId, requestId))
    // A cached handle's schema is rechecked inside the snapshot's transaction, not before it:
    // its data_version read then shares the transaction's locks (one lock round instead of two)
    // and the schema checked is that of the state the rows come from.
    const handle = this.openHandle(organisationId, requestId, false)
    const snapshot = new TenantSnapshot(this.lease(handle, requestId))
    if (handle.schemaChecked) return snapshot
    try {
      this.ensureServable(handle, () => this.cache.get(organisationId) === handle && this.cache.delete(organisationId), requestId)
    } catch (error) {
      snapshot.close()
      throw error
    }
    return snapshot
  }

  /**
   * Leases a connection of its own, closed on release, for a long read (a CSV export). A
   * statement being stepped holds its connection's read snapshot: on the shared connection,
   * every page request of the organisation would see that old snapshot until the export ended.
   * The file is checked as for `acquire` first. Throws TenantUnavailableError.
   */
  acquireOwn(organisationId: string, requestId?: string): TenantLease {
    const shared = this.openHandle(organisationId, requestId)
    let handle: TenantHandle
    try {
      const path = tenantFilePath(this.options.dataDir, organisationId)
      const db = openReadOnly(path, this.options.readOnly)
      // The file checked for the shared handle, not one put in its place since.
      if (fileIdentity(path) !== shared.fileIdentity) {
        db.close(false)
        throw new UntrustedFileError(path, 'was replaced while it was being opened')
      }
      handle = new TenantHandle(organisationId, db, shared.fileIdentity)
      this.options.onOpen?.()
    } catch (error) {
      throw this.unavailable(organisationId, openFailure(error), requestId)
    }
    // Never cached: retired from the start, so the last release closes it.
    handle.retired = true
    this.retiredInUse.add(handle)
    return this.lease(handle, requestId)
  }

  private lease(handle: TenantHandle, requestId: string | undefined): TenantLease {
    const { organisationId } = handle
    handle.leases++
    this.leasesOut++
    let released = false
    const release = () => {
      if (released) return
      released = true
      handle.leases--
      this.leasesOut--
      if (handle.retired && handle.leases === 0) this.closeRetired(handle)
    }
    const failure = (error: unknown): unknown => {
      // One row cannot be served; the file is sound, so the handle stays.
      if (error instanceof RowBreachError) {
        const { breach } = error
        return this.unavailable(organisationId, { kind: 'holding a row that breaks the tenant contract', reason: error.message }, requestId, {
          table: breach.table,
          rowId: breach.id,
          columns: breach.columns,
        })
      }
      if (!(error instanceof SQLiteError || error instanceof DamagedFileError)) return error
      // The file broke: the cached handle goes too (the same one, or the shared one of an own lease).
      this.cache.delete(organisationId)
      return this.unavailable(organisationId, describeFileFailure(error), requestId)
    }
    return {
      organisationId,
      statement: (sql, options) => (options?.fresh ? handle.db.prepare(sql) : handle.statement(sql)),
      schema: () => handle.recheckSchema(),
      release,
      failure,
    }
  }

  /** Counts for tests, readiness and benchmarks. */
  stats(): { open: number; cached: number; leased: number } {
    return { open: this.cache.size + this.retiredInUse.size, cached: this.cache.size, leased: this.leasesOut }
  }

  /** Closes every idle handle and retires the leased ones (they close on release). */
  close(): void {
    this.cache.clear()
  }

  /** `check`: false leaves a cached handle's schema check to the caller (see openSnapshot). */
  private openHandle(organisationId: string, requestId: string | undefined, check = true): TenantHandle {
    if (!isValidOrganisationId(organisationId)) throw new TenantUnavailableError(organisationId, 'unreadable', 'invalid organisation id')
    const path = tenantFilePath(this.options.dataDir, organisationId)
    const identity = fileIdentity(path)
    const cached = this.cache.get(organisationId)
    if (cached && cached.fileIdentity === identity) {
      cached.schemaChecked = false
      if (check) this.ensureServable(cached, () => this.cache.delete(organisationId), requestId)
      return cached
    }
    if (cached) this.cache.delete(organisationId) // the file was replaced or removed
    // On a replica, an organisation control.sqlite names but whose file its restore loop has not
    // put in place (not shipped yet): a wait, not a fault of the organisation's data.
    if (identity === null) throw this.unavailable(organisationId, this.options.readOnly ? { kind: 'not restored on this replica yet', reason: 'tenant file not restored' } : { kind: 'missing', reason: 'tenant file missing' }, requestId)

    let handle: TenantHandle
    try {
      // Only the service's own file, never through a link, and the one whose identity is kept.
      const db = openReadOnly(path, this.options.readOnly)
      if (fileIdentity(path) !== identity) {
        db.close(false)
        throw new UntrustedFileError(path, 'was replaced while it was being opened')
      }
      handle = new TenantHandle(organisationId, db, identity)
      this.options.onOpen?.()
    } catch (error) {
      throw this.unavailable(organisationId, openFailure(error), requestId)
    }
    this.ensureServable(handle, () => handle.close(), requestId)
    handle.schemaChecked = true
    this.cache.set(organisationId, handle)
    if (this.loggedFailures.delete(organisationId)) this.options.logger.info('tenant_recovered', { organisationId })
    return handle
  }

  /**
   * The one check of a handle, when it is opened and on every later lease: a schema version this
   * program serves (see recheckSchema). Otherwise `discard` the handle and throw the 503.
   */
  private ensureServable(handle: TenantHandle, discard: () => void, requestId: string | undefined): void {
    const { organisationId } = handle
    let failure: { kind: TenantFailureKind; reason: string } | undefined
    try {
      const { version } = handle.recheckSchema()
      if (!isServableTenantVersion(version)) failure = { kind: 'unknown schema version', reason: `unknown tenant schema version ${version}` }
    } catch (error) {
      failure = describeFileFailure(error)
    }
    if (failure === undefined) return
    discard()
    throw this.unavailable(organisationId, failure, requestId)
  }

  /** The 503 for a file that cannot be served, logged once per reason with the request that met it first. */
  private unavailable(organisationId: string, { kind, reason }: { kind: TenantFailureKind; reason: string }, requestId: string | undefined, fields: Record<string, unknown> = {}): TenantUnavailableError {
    if (this.loggedFailures.get(organisationId) !== reason) {
      this.loggedFailures.set(organisationId, reason)
      this.options.logger.error('tenant_unavailable', { requestId, organisationId, reason, ...fields })
    }
    return new TenantUnavailableError(organisationId, kind, reason)
  }

  private retire(handle: TenantHandle): void {
    handle.retired = true
    if (handle.leases === 0) handle.close()
    else this.retiredInUse.add(handle)
  }

  private closeRetired(handle: TenantHandle): void {
    this.retiredInUse.delete(handle)
    handle.close()
  }
}

/** Every column of the contract that the API reads; fails to prepare on a foreign schema. */
const SCHEMA_PROBE = `SELECT
  (SELECT count(*) FROM (SELECT id, name, slug FROM locations LIMIT 1)),
  (SELECT count(*) FROM (SELECT id, location_id, name, slug, status FROM queues LIMIT 1)),
  (SELECT count(*) FROM (SELECT ${TICKET_FIELDS.map((field) => tickets[field].name).join(', ')} FROM tickets LIMIT 1))`

/**
 * A tenant file that is not the service's own (db/trusted-directory.ts): 503 like an unreadable
 * one, logged without its path. Never followed: another organisation's file linked in its place
 * would serve that organisation's data.
 */
function openFailure(error: unknown): { kind: TenantFailureKind; reason: string } {
  if (error instanceof UntrustedFileError) return { kind: 'unreadable', reason: `tenant file ${error.problem}` }
  return describeFileFailure(error)
}

/** SQLite refuses a link itself too (SQLITE_CANTOPEN_SYMLINK), in the path or for its -wal and -shm. */
const READ_ONLY_NO_LINK = constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW

function openReadOnly(path: string, copyOnly = false): Database {
  const db = copyOnly ? openReadOnlyCopy(path) : openOwnFile(path, () => new Database(path, READ_ONLY_NO_LINK))
  try {
    // A reader waits briefly for WAL recovery by a writer, never long: this blocks the event loop.
    db.exec('PRAGMA busy_timeout = 250')
    return db
  } catch (error) {
    db.close(false)
    throw error
  }
}

/** dev:inode of what lies at the path (a link's own, not its target's), or null when nothing does. */
function fileIdentity(path: string): string | null {
  const stat = lstatSync(path, { throwIfNoEntry: false })
  return stat ? `${stat.dev}:${stat.ino}` : null
}

