import type { ControlStore } from './control/store.ts'
import { createOrganisationWithTenant } from './control/provisioning.ts'
import { openTenantForWriting } from './tenant/files.ts'
import { generateTenantData } from './seed/generator.ts'

export interface SampleOrganisation {
  organisationId: string
  token: string
  tickets: number
}

/**
 * First start on an empty data directory: a sample organisation with 90 days of generated data
 * and one token, so that a new user can call the API at once. Later starts change nothing.
 */
export function createSampleOrganisationIfEmpty(store: ControlStore, now: number): SampleOrganisation | null {
  // A read-only copy (READ_ONLY=1) is the writer's to fill.
  if (store.readOnly || store.listOrganisations().length > 0) return null
  const org = createOrganisationWithTenant(store, { name: 'Sample Organisation', slug: 'sample', plan: 'paid', apiEnabled: true, now })
  const db = openTenantForWriting(store.dataDir, org.id)
  let tickets: number
  try {
    tickets = generateTenantData(db, { days: 90, perDay: 300, seed: 'sample', now }).tickets
  } finally {
    db.close()
  }
  const { token } = store.createToken({ organisationId: org.id, name: 'sample token', createdAt: new Date(now).toISOString() })
  return { organisationId: org.id, token, tickets }
}

/** What the first start prints once: the token and two commands to paste. */
export function sampleInstructions(sample: SampleOrganisation, baseUrl: string, now: number): string {
  const to = new Date(now).toISOString().slice(0, 10)
  const from = new Date(now - 30 * 86_400_000).toISOString().slice(0, 10)
  return [
    '',
    `Created a sample organisation with ${sample.tickets} generated tickets and an API token.`,
    'The token is shown this once; keep it (admin token create makes more):',
    '',
    `  export API_TOKEN=${sample.token}`,
    '',
    'Try:',
    `  curl -s -H "Authorization: Bearer $API_TOKEN" ${baseUrl}/v1/queues`,
    `  curl -s -H "Authorization: Bearer $API_TOKEN" -OJ "${baseUrl}/v1/exports/tickets.csv?from=${from}&to=${to}"`,
    '',
  ].join('\n')
}
