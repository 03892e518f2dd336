import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../src/control/store.ts'
import { createOrganisationWithTenant } from '../src/control/provisioning.ts'
import { openTenantForWriting } from '../src/tenant/files.ts'
import { generateTenantData } from '../src/seed/generator.ts'
import { tenantFilePath } from '../src/tenant/paths.ts'

/** Bump when the data set or its layout changes, so a cached copy is rebuilt. */
const DATA_VERSION = 6
/** A fixed "now" makes the data (and so the figures) the same on every run. */
export const DATA_NOW = Date.parse('2026-06-30T18:00:00.000Z')

/** One tenant with about 1M tickets over 90 days, and 20,000 tokens for it. */
export interface BigTenant {
  dataDir: string
  bigOrgId: string
  bigTokens: string[]
  bigTickets: number
  /** from/to covering the first 100,000 tickets, and the whole 90 days. */
  range100k: { from: string; to: string; rows: number }
  range1m: { from: string; to: string; rows: number }
}

/** 2,000 small tenants (2 days of 20 tickets), one token each. */
export interface SmallTenants {
  smallTokens: string[]
}

export type BenchData = BigTenant & SmallTenants

/** The parts of the data set, each built (and cached) only when a scenario needs it. */
export type DataPart = 'big-tenant' | 'small-tenants'
const PARTS: readonly DataPart[] = ['big-tenant', 'small-tenants']

export type PreparedData = { 'big-tenant'?: BigTenant; 'small-tenants'?: SmallTenants }

/** Where every part lives: one data directory, as one server serves them all. */
export function benchDataDir(root: string): string {
  return join(root, `v${DATA_VERSION}`, 'data')
}

/**
 * Builds (or reuses from `root`, i.e. bench/.data) the parts asked for, with the project's own
 * generator, into one data directory. A part being built leaves a marker until its manifest is
 * written: a marker found at start means a build died half-way, and the whole set starts over.
 */
export function prepareData(root: string, parts: readonly DataPart[], log: (line: string) => void): PreparedData {
  const dir = join(root, `v${DATA_VERSION}`)
  const marker = (part: DataPart) => join(dir, `${part}.building`)
  if (!existsSync(dir) || PARTS.some((part) => existsSync(marker(part)))) {
    rmSync(root, { recursive: true, force: true }) // an older version, or a half-built one
    mkdirSync(dir, { recursive: true })
  }
  const dataDir = benchDataDir(root)
  const out: PreparedData = {}
  for (const part of parts) {
    const manifest = join(dir, `${part}.json`)
    if (!existsSync(manifest)) {
      writeFileSync(marker(part), '')
      const built = part === 'big-tenant' ? buildBigTenant(dataDir, log) : buildSmallTenants(dataDir, log)
      writeFileSync(manifest, JSON.stringify(built))
      rmSync(marker(part))
    }
    const cached = JSON.parse(readFileSync(manifest, 'utf8'))
    // The directory is where the data lies now, not where it was built: a checkout moved or
    // copied with its bench/.data keeps working.
    if (part === 'big-tenant') out['big-tenant'] = { ...cached, dataDir }
    else out['small-tenants'] = cached
  }
  return out
}

/** Every part (what `bun run soak` serves). */
export function buildData(root: string, log: (line: string) => void): BenchData {
  const parts = prepareData(root, PARTS, log)
  return { ...parts['big-tenant']!, ...parts['small-tenants']! }
}

function buildBigTenant(dataDir: string, log: (line: string) => void): BigTenant {
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
  store.db.transaction(() => {
    for (let i = 0; i < 20_000; i++) bigTokens.push(store.createToken({ organisationId: big.id, name: `bench ${i}`, createdAt: new Date(DATA_NOW).toISOString() }).token)
  })()
  store.close()
  return {
    dataDir, // for the caller; the manifest's copy is replaced by the current one when read
    bigOrgId: big.id,
    bigTokens,
    bigTickets: tickets,
    range100k: { from: firstDay, to: hundredK, rows: 100_000 },
    range1m: { from: firstDay, to: lastDay, rows: tickets },
  }
}

function buildSmallTenants(dataDir: string, log: (line: string) => void): SmallTenants {
  const store = new ControlStore(dataDir)
  const started = performance.now()
  const smallTokens: string[] = []
  for (let i = 0; i < 2000; i++) {
    const org = createOrganisationWithTenant(store, { name: `Small ${i}`, slug: `small-${i}`, plan: 'paid', apiEnabled: true, now: DATA_NOW })
    const small = openTenantForWriting(dataDir, org.id)
    generateTenantData(small, { days: 2, perDay: 20, seed: `small-${i}`, now: DATA_NOW })
    small.close()
    smallTokens.push(store.createToken({ organisationId: org.id, name: 'bench', createdAt: new Date(DATA_NOW).toISOString() }).token)
  }
  store.close()
  log(`  2,000 small tenants in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return { smallTokens }
}

export function bigTenantFile(data: BigTenant): string {
  return tenantFilePath(data.dataDir, data.bigOrgId)
}
