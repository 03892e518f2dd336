import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { ensurePrivateDirectory, openWritableDatabase } from '../db/files.ts'
import { migrate, MigrationRefusedError, NewerSchemaError, schemaVersion } from '../db/migrator.ts'
import { TENANT_MIGRATIONS, TENANT_SCHEMA_VERSION } from './migrations.ts'
import { tenantDirectory, tenantFilePath } from './paths.ts'

/**
 * Opens an organisation's tenant file for writing (the admin CLI's `org create` and `seed`),
 * creating it 0600 in WAL mode and migrating it to the newest schema. The API never calls this:
 * it reads tenant files through the read-only TenantPool.
 */
export function openTenantForWriting(dataDir: string, organisationId: string): Database {
  const db = openTenantFile(dataDir, organisationId)
  migrate(db, TENANT_MIGRATIONS)
  return db
}

/**
 * Opens a tenant file whose data is about to be replaced (`admin seed --replace`), migrated as
 * far as its present rows allow: a migration refused over rows that break the contract
 * (version 4) is left pending, and `finishMigration` applies it once those rows are gone.
 */
export function openTenantForReplacing(dataDir: string, organisationId: string): Database {
  const db = openTenantFile(dataDir, organisationId)
  try {
    migrateAsFarAsAllowed(db)
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

/** Applies the migrations `openTenantForReplacing` left pending. */
export function finishMigration(db: Database): number {
  return migrate(db, TENANT_MIGRATIONS)
}

/** What `migrateTenantFile` did to one file: `from === to` means it was already current. */
export interface TenantMigration {
  from: number
  to: number
  /** The file did not exist: it was created, empty, with the newest schema. */
  created: boolean
  /** Why the file stopped short of the newest version (its rows break the contract), if it did. */
  refused?: string
  /** The file is of a version newer than this build: left as it is, and why. */
  newer?: string
}

/**
 * Brings one organisation's tenant file to `target` (the newest schema by default; an older one
 * takes the steps back), as far as its rows allow, and says from which version to which.
 */
export function migrateTenantFile(dataDir: string, organisationId: string, target = TENANT_SCHEMA_VERSION): TenantMigration {
  const created = !existsSync(tenantFilePath(dataDir, organisationId))
  const db = openTenantFile(dataDir, organisationId)
  try {
    const from = schemaVersion(db)
    // Named with the others rather than ending the run: the other files still get migrated.
    if (from > TENANT_SCHEMA_VERSION) return { from, to: from, created, newer: new NewerSchemaError(from, TENANT_SCHEMA_VERSION).message }
    return { from, ...migrateAsFarAsAllowed(db, target), created }
  } finally {
    db.close()
  }
}

function migrateAsFarAsAllowed(db: Database, target = TENANT_SCHEMA_VERSION): { to: number; refused?: string } {
  try {
    return { to: migrate(db, TENANT_MIGRATIONS, target) }
  } catch (error) {
    if (!(error instanceof MigrationRefusedError)) throw error
    return { to: error.version, refused: error.reason }
  }
}

/** Opens (creating 0600 if needed) a tenant file read-write, as it is. */
function openTenantFile(dataDir: string, organisationId: string): Database {
  ensurePrivateDirectory(tenantDirectory(dataDir))
  return openWritableDatabase(tenantFilePath(dataDir, organisationId), 5000)
}
