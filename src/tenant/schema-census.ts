import { constants, Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import type { Logger } from '../logger.ts'
import { schemaVersion } from '../db/migrator.ts'
import { openReadOnlyCopy } from '../db/files.ts'
import { openOwnFile } from '../db/trusted-directory.ts'
import { TENANT_SCHEMA_VERSION } from './migrations.ts'
import { tenantFilePath } from './paths.ts'

/** Organisations named at most per list in the start-up line; the count says how many there are. */
const NAMED = 20

/** The tenant files of a data directory by schema version, and the ones the operator must act on. */
export interface SchemaCensus {
  /** The newest version this build knows. */
  current: number
  /** How many files are at each version. */
  files: Record<string, number>
  /** Older than `current` (version 0 included): `admin migrate` brings them up. */
  needMigrate: string[]
  /** Newer than this build: a later release made them; it can take them back (`admin migrate --to`). */
  newer: string[]
  /** No file, or one that cannot be read. */
  unreadable: string[]
}

/**
 * Reads each organisation's schema version (PRAGMA user_version, read-only: nothing is written).
 * With `readOnly` (READ_ONLY=1) a file is opened as the replica's pool opens it, so that a copy in
 * WAL mode gets no -wal or -shm beside it (it is counted unreadable, as it cannot be served).
 */
export function takeSchemaCensus(dataDir: string, organisations: readonly { id: string; slug: string }[], { readOnly = false } = {}): SchemaCensus {
  const census: SchemaCensus = { current: TENANT_SCHEMA_VERSION, files: {}, needMigrate: [], newer: [], unreadable: [] }
  for (const org of organisations) {
    const name = `${org.id} (${org.slug})`
    const version = versionOf(tenantFilePath(dataDir, org.id), readOnly)
    if (version === undefined) {
      census.unreadable.push(name)
      continue
    }
    census.files[version] = (census.files[version] ?? 0) + 1
    if (version < TENANT_SCHEMA_VERSION) census.needMigrate.push(name)
    if (version > TENANT_SCHEMA_VERSION) census.newer.push(name)
  }
  return census
}

function versionOf(path: string, readOnly: boolean): number | undefined {
  if (!existsSync(path)) return undefined
  try {
    const db = readOnly ? openReadOnlyCopy(path) : openOwnFile(path, () => new Database(path, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW))
    try {
      return schemaVersion(db)
    } finally {
      db.close()
    }
  } catch {
    return undefined // not a database, or not ours to read: the API answers 503 and logs why
  }
}

/**
 * The start-up line (`tenant_schemas`): the files by version, and by name the ones that need
 * `admin migrate`, are newer than this build, or cannot be read. A warning when there are any:
 * their organisations are served more slowly, without change tracking, or not at all.
 */
export function logSchemaCensus(logger: Logger, census: SchemaCensus): void {
  const named = (list: string[]) => (list.length > NAMED ? [...list.slice(0, NAMED), `… and ${list.length - NAMED} more`] : list)
  const fields = {
    current: census.current,
    files: census.files,
    ...(census.needMigrate.length > 0 && { needMigrate: census.needMigrate.length, needMigrateNamed: named(census.needMigrate), fix: 'admin migrate' }),
    ...(census.newer.length > 0 && { newer: census.newer.length, newerNamed: named(census.newer) }),
    ...(census.unreadable.length > 0 && { unreadable: census.unreadable.length, unreadableNamed: named(census.unreadable) }),
  }
  const attention = census.needMigrate.length + census.newer.length + census.unreadable.length > 0
  if (attention) logger.warn('tenant_schemas', fields)
  else logger.info('tenant_schemas', fields)
}
