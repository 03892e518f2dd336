import { Database } from 'bun:sqlite'
import { closeSync, constants, existsSync, mkdirSync, openSync, chmodSync, readSync, statSync } from 'node:fs'
import { createPrivateFile, openOwnFile } from './trusted-directory.ts'

/**
 * Files of the data directory hold organisation data and token hashes, so the directories are
 * created 0700 and the SQLite files 0600. SQLite gives its -wal and -shm files the mode of the
 * database file, so creating the file first with 0600 covers them too.
 */
export function ensurePrivateDirectory(path: string): void {
  if (!existsSync(path)) mkdirSync(path, { recursive: true, mode: 0o700 })
  // The mode given to mkdir is masked by the umask, and a directory that came with a checkout
  // (./data) is usually 0755: either way, others lose access here.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o700)
}

/**
 * Opens (creating 0600 if needed) a read-write SQLite file in WAL mode: only the service's own
 * file, never through a link (db/trusted-directory.ts). Throws UntrustedFileError.
 */
export function openWritableDatabase(path: string, busyTimeoutMs: number): Database {
  createPrivateFile(path)
  const db = openOwnFile(path, () => new Database(path, { readwrite: true, create: false, strict: true }))
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  return db
}

/** A file that READ_ONLY=1 cannot open without writing: missing, or in WAL mode. */
export class ReadOnlyCopyError extends Error {}

/**
 * Opens a SQLite file for reading without ever writing in its directory (READ_ONLY=1). A file
 * in WAL mode is refused: SQLite creates its -wal and -shm files to read it, and fails where it
 * cannot. A replica's copies are switched to rollback mode when restored (cli/replica-restore.ts).
 */
export function openReadOnlyCopy(path: string): Database {
  if (!existsSync(path)) throw new ReadOnlyCopyError(`${path} does not exist`)
  return openOwnFile(path, () => {
    if (isWalModeFile(path)) throw new ReadOnlyCopyError(`${path} is in WAL mode, which cannot be read without writing beside it; restore it with admin replica restore`)
    return new Database(path, { readonly: true, strict: true })
  })
}

/** Bytes 18 and 19 of a SQLite header are 2 in WAL mode (1 in rollback mode). */
function isWalModeFile(path: string): boolean {
  const header = Buffer.alloc(20)
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW)
  try {
    return readSync(fd, header, 0, 20, 0) === 20 && header[18] === 2 && header[19] === 2
  } finally {
    closeSync(fd)
  }
}
