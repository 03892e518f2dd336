import { rmSync } from 'node:fs'
import { ControlStoreError, type ControlStore, type Organisation, type Plan } from './store.ts'
import { openTenantForWriting } from '../tenant/files.ts'
import { tenantFilePath } from '../tenant/paths.ts'
import { slugify } from './slug.ts'

/**
 * Creates an organisation and its tenant file (current schema, WAL). Either both exist
 * afterwards or neither does: a failure after the file was made removes it again.
 */
export function createOrganisationWithTenant(
  store: ControlStore,
  input: { name: string; slug?: string; plan: Plan; apiEnabled: boolean; now: number },
): Organisation {
  const name = input.name.trim()
  if (name === '') throw new ControlStoreError('--name must not be empty')
  // The slug's rule and uniqueness are the store's (createOrganisation), checked before the file is made.
  const slug = input.slug ?? slugify(name)

  return store.db.transaction(() => {
    const organisation = store.createOrganisation({ name, slug, plan: input.plan, apiEnabled: input.apiEnabled, createdAt: new Date(input.now).toISOString() })
    const path = tenantFilePath(store.dataDir, organisation.id)
    try {
      openTenantForWriting(store.dataDir, organisation.id).close()
    } catch (error) {
      rmSync(path, { force: true })
      rmSync(`${path}-wal`, { force: true })
      rmSync(`${path}-shm`, { force: true })
      throw error
    }
    return organisation
  }).immediate()
}
