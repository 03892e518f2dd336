import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../src/control/store.ts'
import { createOrganisationWithTenant } from '../src/control/provisioning.ts'
import { openTenantForWriting } from '../src/tenant/files.ts'
import { generateTenantData } from '../src/seed/generator.ts'
import { tenantFilePath } from '../src/tenant/paths.ts'

/** Bump when the data set changes, so a cached copy is rebuilt. */
const DATA_VERSION = 3
/** A fixed "now" makes the data (and so the figures) the same on every run. */
export const DATA_NOW = Date.parse('2026-06-30T18:00:00.000Z')

export interface BenchData {
  dataDir: string
  bigOrgId: string
  bigTokens: string[]
  bigTickets: number
  smallTokens: string[]
  /** from/to covering the first 100,000 tickets, and the whole 90 days. */
  range100k: { from: string; to: string; rows: number }
  range1m: { from: string; to: string; rows: number }
}

/**
 * Builds (or reuses from bench/.data) the benchmark's data with the project's own generator:
 * one tenant with about 1M tickets over 90 days, 2,000 small tenants, and tokens.
 */
export function buildData(root: string, log: (line: string) => void): BenchData {
  const dir = join(root, `v${DATA_VERSION}`)
  const manifest = join(dir, 'manifest.json')
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as BenchData
  rmSync(root, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const dataDir = join(dir, 'data')
  const store = new ControlStore(dataDir)
  const started = performance.now()

  const big = createOrganisationWithTenant(store, { name: 'Benchmark Big', slug: 'bench-big', plan: 'paid', apiEnabled: true, now: DATA_NOW })
  const db = openTenantForWriting(dataDir, big.id)
  const { tickets } = generateTenantData(db, { days: 90, perDay: 13_200, seed: 'bench', now: DATA_NOW })
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  const firstDay = new Date(Math.floor(DATA_NOW / 86_400_000) * 86_400_000 - 89 * 86_400_000).toISOString()
  const lastDay = new Date(Math.floor(DATA_NOW / 86_400_000) * 86_400_000 + 86_400_000).toISOString()
  const hundredK = (db.query('SELECT created_at AS t FROM tickets ORDER BY created_at, id LIMIT 1 OFFSET 100000').get() as { t: string }).t
  db.close()
  log(`  1 tenant with ${tickets} tickets in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const bigTokens: string[] = []
  const smallTokens: string[] = []
  store.db.transaction(() => {
    for (let i = 0; i < 20_000; i++) bigTokens.push(store.createToken({ organisationId: big.id, name: `bench ${i}`, createdAt: new Date(DATA_NOW).toISOString() }).token)
  })()
  const smallStart = performance.now()
  for (let i = 0; i < 2000; i++) {
    const org = createOrganisationWithTenant(store, { name: `Small ${i}`, slug: `small-${i}`, plan: 'paid', apiEnabled: true, now: DATA_NOW })
    const small = openTenantForWriting(dataDir, org.id)
    generateTenantData(small, { days: 2, perDay: 20, seed: `small-${i}`, now: DATA_NOW })
    small.close()
    smallTokens.push(store.createToken({ organisationId: org.id, name: 'bench', createdAt: new Date(DATA_NOW).toISOString() }).token)
  }
  store.close()
  log(`  2,000 small tenants in ${((performance.now() - smallStart) / 1000).toFixed(1)} s`)

  const data: BenchData = {
    dataDir,
    bigOrgId: big.id,
    bigTokens,
    bigTickets: tickets,
    smallTokens,
    range100k: { from: firstDay, to: hundredK, rows: 100_000 },
    range1m: { from: firstDay, to: lastDay, rows: tickets },
  }
  writeFileSync(manifest, JSON.stringify(data))
  return data
}

export function bigTenantFile(data: BenchData): string {
  return tenantFilePath(data.dataDir, data.bigOrgId)
}
