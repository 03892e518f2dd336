import { rmSync } from 'node:fs'
import { ControlStoreError, type ControlStore, type Organisation, type Plan } from './store.ts'
import { openTenantForWriting } from '../tenant/files.ts'
import { tenantFilePath } from '../tenant/paths.ts'

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62})$/

/** A URL-style short name from a display name ("Café Nord" → "cafe-nord"). */
export function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
}

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
  const slug = input.slug ?? slugify(name)
  if (!SLUG.test(slug)) throw new ControlStoreError(`slug "${slug}" must be lower-case letters, digits and dashes (at most 63)`)
  if (store.findOrganisation(slug)) throw new ControlStoreError(`slug "${slug}" is already taken`)

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
