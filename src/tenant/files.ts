import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { ensurePrivateDirectory, openWritableDatabase } from '../db/files.ts'
import { migrate, schemaVersion } from '../db/migrator.ts'
import { TENANT_MIGRATIONS } from './migrations.ts'
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

/** What `migrateTenantFile` did to one file: `from === to` means it was already current. */
export interface TenantMigration {
  from: number
  to: number
  /** The file did not exist: it was created, empty, with the newest schema. */
  created: boolean
}

/** Brings one organisation's tenant file to the newest schema and says from which version to which. */
export function migrateTenantFile(dataDir: string, organisationId: string): TenantMigration {
  const created = !existsSync(tenantFilePath(dataDir, organisationId))
  const db = openTenantFile(dataDir, organisationId)
  try {
    const from = schemaVersion(db)
    return { from, to: migrate(db, TENANT_MIGRATIONS), created }
  } finally {
    db.close()
  }
}

/** Opens (creating 0600 if needed) a tenant file read-write, as it is. */
function openTenantFile(dataDir: string, organisationId: string): Database {
  ensurePrivateDirectory(tenantDirectory(dataDir))
  return openWritableDatabase(tenantFilePath(dataDir, organisationId), 5000)
}
