import { Database } from 'bun:sqlite'
import { closeSync, existsSync, mkdirSync, openSync, chmodSync, statSync } from 'node:fs'

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

/** Opens (creating 0600 if needed) a read-write SQLite file in WAL mode. */
export function openWritableDatabase(path: string, busyTimeoutMs: number): Database {
  if (!existsSync(path)) {
    closeSync(openSync(path, 'a', 0o600))
    chmodSync(path, 0o600)
  }
  const db = new Database(path, { readwrite: true, create: false, strict: true })
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  return db
}
