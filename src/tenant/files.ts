import type { Database } from 'bun:sqlite'
import { ensurePrivateDirectory, openWritableDatabase } from '../db/files.ts'
import { migrate } from '../db/migrator.ts'
import { TENANT_MIGRATIONS } from './migrations.ts'
import { tenantDirectory, tenantFilePath } from './paths.ts'

/**
 * Opens an organisation's tenant file for writing (the admin CLI's `org create` and `seed`),
 * creating it 0600 in WAL mode and migrating it to the newest schema. The API never calls this:
 * it reads tenant files through the read-only TenantPool.
 */
export function openTenantForWriting(dataDir: string, organisationId: string): Database {
  ensurePrivateDirectory(tenantDirectory(dataDir))
  const db = openWritableDatabase(tenantFilePath(dataDir, organisationId), 5000)
  migrate(db, TENANT_MIGRATIONS)
  return db
}
