import { Database } from 'bun:sqlite'
import { isValidOrganisationId } from '../tenant/paths.ts'

/**
 * The organisations a control.sqlite names, read-only and without the control store's
 * machinery: what the writer's shipping replicates and what a replica's round restores. An id
 * that is not a file name of orgs/ is never served either (tenant/paths.ts).
 */
export function organisationIdsIn(controlFile: string): string[] {
  const db = new Database(controlFile, { readonly: true })
  try {
    return (db.query('SELECT id FROM organisations ORDER BY id').all() as { id: string }[]).map((row) => row.id).filter(isValidOrganisationId)
  } finally {
    db.close()
  }
}
