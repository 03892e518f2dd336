import { Database } from 'bun:sqlite'
import { chmodSync, existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { ControlStore, Organisation } from '../control/store.ts'
import { ensurePrivateDirectory } from '../db/files.ts'
import { tenantFilePath } from '../tenant/paths.ts'

/** Where `org delete` keeps a deleted organisation's tenant file, under DATA_DIR. */
export const DELETED_DIRECTORY = 'deleted'

export interface DeletedOrganisation {
  organisationId: string
  slug: string
  tokens: number
  /** The backup of its tenant file, relative to DATA_DIR; null when it had none. */
  backup: string | null
}

/**
 * `admin org delete <org> --yes`: the organisation, its tokens and its quota counts leave
 * control.sqlite in one transaction, and its tenant file leaves orgs/, after a copy of it is
 * written to deleted/<id>-<time>.sqlite (VACUUM INTO: one consistent file, whatever its WAL held,
 * taken while the server may be reading it). The copy is made first: if it fails, nothing is
 * deleted. From the next request its tokens are unknown (401).
 */
export function deleteOrganisation(store: ControlStore, org: Organisation, now: number): DeletedOrganisation {
  const source = tenantFilePath(store.dataDir, org.id)
  let backup: string | null = null
  if (existsSync(source)) {
    const directory = join(store.dataDir, DELETED_DIRECTORY)
    ensurePrivateDirectory(directory)
    backup = join(DELETED_DIRECTORY, `${org.id}-${new Date(now).toISOString().replace(/[:.]/g, '-')}.sqlite`)
    const target = join(store.dataDir, backup)
    const db = new Database(source, { readonly: true })
    try {
      db.exec('PRAGMA busy_timeout = 5000')
      db.prepare('VACUUM INTO ?').run(target)
    } finally {
      db.close()
    }
    chmodSync(target, 0o600)
  }
  const tokens = store.db.transaction(() => {
    const removed = store.db.prepare('DELETE FROM api_tokens WHERE organisation_id = ?').run(org.id).changes
    store.db.prepare('DELETE FROM demo_quota_usage WHERE organisation_id = ?').run(org.id)
    store.db.prepare('DELETE FROM organisations WHERE id = ?').run(org.id)
    return removed
  }).immediate()
  for (const file of [source, `${source}-wal`, `${source}-shm`]) rmSync(file, { force: true })
  return { organisationId: org.id, slug: org.slug, tokens, backup }
}
