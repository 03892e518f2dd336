import { accessSync, constants, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensurePrivateDirectory } from './files.ts'

/** The data directory cannot be used by this process's user: said in one line that names both. */
export class DataDirectoryError extends Error {}

/**
 * `user queue-api (uid 61234)`, or `uid 61234` for a uid without an entry in /etc/passwd. Read
 * from the file because Bun's os.userInfo() answers `unknown` for any user but the login's.
 */
function currentUser(): string {
  const uid = process.getuid?.()
  let name: string | undefined
  try {
    name = readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':')).find((fields) => fields[2] === String(uid))?.[0]
  } catch {
    // no /etc/passwd (an image built FROM scratch without one)
  }
  return name ? `user ${name} (uid ${uid})` : `uid ${uid}`
}

/**
 * Checked once at start, before anything is written: the data directory exists (made if need be),
 * is private (0700, which only its owner can set) and this user can write it and control.sqlite.
 * Otherwise the first write would fail deep inside start-up with a stack trace that names neither
 * the directory nor the user to give it to.
 */
export function ensureWritableDataDirectory(dataDir: string): void {
  const fail = (problem: string, error: unknown): never => {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    throw new DataDirectoryError(`DATA_DIR ${dataDir} ${problem} by ${currentUser()} (${code}): make that user its owner (chown -R), or set DATA_DIR to a directory it owns`)
  }
  try {
    ensurePrivateDirectory(dataDir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw error
    fail(existsSync(dataDir) ? 'cannot be made private (mode 0700)' : 'cannot be created', error)
  }
  for (const path of [dataDir, join(dataDir, 'control.sqlite'), join(dataDir, 'control.sqlite-wal')]) {
    try {
      if (existsSync(path)) accessSync(path, constants.W_OK)
    } catch (error) {
      fail(path === dataDir ? 'cannot be written' : `cannot be written (${path})`, error)
    }
  }
}
