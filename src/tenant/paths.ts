import { join } from 'node:path'

/**
 * Organisation ids become file names, so they are checked before any path is built:
 * letters, digits, `_` and `-` only, at most 64 characters (no `.`, no `/`).
 */
const ORGANISATION_ID = /^[A-Za-z0-9_-]{1,64}$/

export function isValidOrganisationId(id: string): boolean {
  return ORGANISATION_ID.test(id)
}

export function tenantDirectory(dataDir: string): string {
  return join(dataDir, 'orgs')
}

/** The tenant file of an organisation. Throws on an id that is not a safe file name. */
export function tenantFilePath(dataDir: string, organisationId: string): string {
  if (!isValidOrganisationId(organisationId)) throw new Error('invalid organisation id')
  return join(tenantDirectory(dataDir), `${organisationId}.sqlite`)
}
