import type { ControlStore } from './control/store.ts'
import type { SampleData } from './config/config.ts'
import { createOrganisationWithTenant } from './control/provisioning.ts'
import { openTenantForWriting } from './tenant/files.ts'
import { generateTenantData } from './seed/generator.ts'

export interface SampleOrganisation {
  organisationId: string
  /** Made only where it can be shown (a terminal). */
  token: string | undefined
  tickets: number
}

/**
 * Whether a first start makes the sample organisation. A person who starts the server by hand
 * has it on a terminal; a unit, an image or a script has standard error on a journal, a log
 * file or a pipe, where 23,000 made-up tickets in production are a surprise (SAMPLE_DATA=auto).
 */
export function wantsSampleData(setting: SampleData, stderrIsTerminal: boolean): boolean {
  return setting === 'on' || (setting === 'auto' && stderrIsTerminal)
}

/**
 * First start on an empty data directory: a sample organisation with 90 days of generated data
 * and one token, so that a new user can call the API at once. Later starts change nothing.
 */
export function createSampleOrganisationIfEmpty(store: ControlStore, now: number, withToken = true): SampleOrganisation | null {
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
  const token = withToken ? store.createToken({ organisationId: org.id, name: 'sample token', createdAt: new Date(now).toISOString() }).token : undefined
  return { organisationId: org.id, token, tickets }
}

/**
 * What the first start prints once: the token and two commands to paste. Only on a terminal: a
 * token on a journal or a container log would be kept in plain text where others read it, so
 * there no token is made and the line says how to make one. `admin`: the admin CLI as invoked here.
 */
export function sampleInstructions(sample: SampleOrganisation, baseUrl: string, now: number, admin: string): string {
  if (sample.token === undefined) {
    return `Created a sample organisation (slug sample) with ${sample.tickets} generated tickets. Its token is not printed, as standard error is not a terminal: make one with \`${admin} token create --org sample --name mine\`.\n`
  }
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
