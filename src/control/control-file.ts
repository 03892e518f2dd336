import { Database } from 'bun:sqlite'
import { rmSync, statSync } from 'node:fs'
import { schemaVersion } from '../db/migrator.ts'
import { openOwnFile, UntrustedFileError } from '../db/trusted-directory.ts'

/**
 * control.sqlite cannot be read right now (missing, corrupt, not a database): the request is
 * answered 503 at the edge (http/error-response.ts) until a good file is put back.
 */
export class ControlStoreUnavailableError extends Error {
  constructor() {
    super('control.sqlite cannot be read')
    this.name = 'ControlStoreUnavailableError'
  }
}

/**
 * SQLite failures that mean the file itself cannot be read (corrupt, not a database, gone,
 * moved): the connection is dropped, so that the next use opens the file again.
 */
const FILE_FAILURE = /^SQLITE_(CORRUPT|NOTADB|IOERR|CANTOPEN|READONLY_DBMOVED)/

function isFileFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && FILE_FAILURE.test(code)
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

/** An open connection to the file, with whatever was prepared on it. */
export interface OpenConnection {
  readonly db: Database
  close(): void
}

/**
 * The connection to control.sqlite as it lies on disk now. The file may be replaced while the
 * server runs (a restore by copy and rename: a new inode) or broken in place: every use first
 * compares the file's identity (one stat) with the one opened, and opens the file again when it
 * changed, so a token revoked in a restored file is refused on the very next request.
 */
export class ControlFile<C extends OpenConnection> {
  private connection: C | undefined
  private openedIdentity: FileIdentity | null = null
  /** The WAL and its index beside the file that was opened: the old file's, once another file lies there. */
  private openedWal: FileIdentity | null = null
  private openedShm: FileIdentity | null = null

  constructor(
    private readonly path: string,
    private readonly options: {
      busyTimeoutMs: number
      /** A replica's copy (READ_ONLY=1): opened with `openCopy`, and neither its journal nor its log is ever touched. */
      readOnly?: boolean
      openCopy?: () => Database
      /** A failure of opening that means the file cannot be served as it is (beside SQLite's own). */
      isUnservable?: (error: unknown) => boolean
      /** Migrates a freshly opened file and prepares the statements on it. */
      prepare: (db: Database) => C
      /** Told when another file, or another state of it, was opened: what was kept of the old one is stale. */
      onReopen: () => void
    },
  ) {}

  /** Starts with a connection the caller opened (the first open waits longer for the write lock). */
  adopt(db: Database): C {
    this.connection = this.prepared(db)
    return this.connection
  }

  close(): void {
    this.connection?.close()
    this.connection = undefined
  }

  /** Prepares a freshly opened file and notes which file it is; closes it on failure. */
  private prepared(db: Database): C {
    try {
      const connection = this.options.prepare(db)
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
 * The connection to the file now at the path, opened again when its identity changed (a new
   * inode is a restore by rename; a new size or mtime may be a copy over it, or only a
   * checkpoint, which then costs a reopen) or after a failure. A missing file is never created
   * here, it is a restore half done: ControlStoreUnavailableError, as for an unreadable one.
   */
  current(): C {
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
      if (replaced && !this.options.readOnly) {
        try {
          this.connection.db.exec('PRAGMA journal_mode = DELETE')
        } catch {
          // The old file is unreadable, or another process still has it open (below).
        }
      }
      this.close()
    }
    if (replaced && !this.options.readOnly) this.moveOldLogAside()
    this.options.onReopen()
    if (identity === null) throw new ControlStoreUnavailableError()
    try {
      this.connection = this.prepared(this.options.readOnly ? this.options.openCopy!() : this.openExisting())
      return this.connection
    } catch (error) {
      // A link or another user's file put in its place is not served either (db/trusted-directory.ts).
      if (isFileFailure(error) || error instanceof UntrustedFileError || this.options.isUnservable?.(error)) throw new ControlStoreUnavailableError()
      throw error
    }
  }

  /**
   * Runs a read or write of the request path: a failure of the file itself drops the
   * connection (the next use opens the file again) and becomes ControlStoreUnavailableError.
   */
  use<T>(work: (connection: C) => T): T {
    const connection = this.current()
    try {
      return work(connection)
    } catch (error) {
      if (!isFileFailure(error)) throw error
      if (this.connection === connection) this.close()
      throw new ControlStoreUnavailableError()
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
    const db = openOwnFile(this.path, (path) => new Database(path, { readwrite: true, create: false, strict: true }))
    try {
      db.exec(`PRAGMA busy_timeout = ${this.options.busyTimeoutMs}`)
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
}
