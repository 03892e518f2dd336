import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../src/control/store.ts'
import { createOrganisationWithTenant } from '../src/control/provisioning.ts'
import { openTenantForWriting } from '../src/tenant/files.ts'
import { generateTenantData } from '../src/seed/generator.ts'
import { DATA_NOW, type BigTenant } from './data.ts'

/**
 * The `sync` scenario's 3M-ticket tenant: 90 days at three times the big tenant's rate, built
 * once with the project's own generator into the benchmark's data directory (beside the big
 * tenant, so the one benchmark server serves it) and reused while its manifest is there.
 */
export interface HugeTenant {
  token: string
  tickets: number
  range: { from: string; to: string }
}

export function prepareHugeTenant(big: BigTenant, log: (line: string) => void): HugeTenant {
  const manifest = join(big.dataDir, '..', 'huge-tenant.json')
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as HugeTenant
  const store = new ControlStore(big.dataDir)
  try {
    const existing = store.listOrganisations().find((org) => org.slug === 'bench-huge')
    if (existing) throw new Error('bench-huge exists without its manifest: remove bench/.data to rebuild the data')
    const started = performance.now()
    const org = createOrganisationWithTenant(store, { name: 'Benchmark Huge', slug: 'bench-huge', plan: 'paid', apiEnabled: true, now: DATA_NOW })
    const db = openTenantForWriting(big.dataDir, org.id)
    let tickets: number
    try {
      ;({ tickets } = generateTenantData(db, { days: 90, perDay: 39_600, seed: 'bench-huge', now: DATA_NOW }))
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    } finally {
      db.close()
    }
    const token = store.createToken({ organisationId: org.id, name: 'bench sync', createdAt: new Date(DATA_NOW).toISOString() }).token
    log(`  1 tenant with ${tickets} tickets in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const built: HugeTenant = { token, tickets, range: big.range1m }
    writeFileSync(manifest, JSON.stringify(built))
    return built
  } catch (error) {
    rmSync(manifest, { force: true })
    throw error
  } finally {
    store.close()
  }
}
