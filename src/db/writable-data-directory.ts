import { accessSync, constants, existsSync } from 'node:fs'
import { join } from 'node:path'
import { ensurePrivateDirectory } from './files.ts'
import { checkTrustedDataDirectory, DataDirectoryError, userName } from './trusted-directory.ts'

export { DataDirectoryError } from './trusted-directory.ts'

/**
 * Checked once at start, before anything is written: the data directory is ours and holds no
 * link nor another user's file (db/trusted-directory.ts), exists (made if need be), is private
 * (0700) and this user can write it and control.sqlite. Otherwise the first write would fail
 * deep inside start-up with a stack trace that names neither the directory nor the user to give
 * it to. `readOnly` (READ_ONLY=1, which writes nothing): the trust check alone.
 */
export function ensureWritableDataDirectory(dataDir: string, options: { readOnly?: boolean } = {}): void {
  const fail = (problem: string, error: unknown): never => {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    throw new DataDirectoryError(`DATA_DIR ${dataDir} ${problem} by ${userName()} (${code}): make that user its owner (chown -R), or set DATA_DIR to a directory it owns`)
  }
  try {
    checkTrustedDataDirectory(dataDir, { fix: !options.readOnly })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EACCES' && code !== 'EPERM') throw error
    fail('cannot be read', error)
  }
  if (options.readOnly) return
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
