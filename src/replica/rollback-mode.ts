import { Database } from 'bun:sqlite'

/**
 * Switches a restored copy (not yet in place) to SQLite's rollback-journal mode. A WAL-mode file
 * cannot be read without creating its -wal and -shm files beside it, which a replica's
 * read-only server (READ_ONLY=1) never does; a rollback-mode file is read with locks alone.
 */
export function switchToRollbackMode(path: string): void {
  const db = new Database(path, { readwrite: true, create: false })
  try {
    db.exec('PRAGMA journal_mode = DELETE')
  } finally {
    db.close()
  }
}
