import { afterEach, describe, expect, test } from 'bun:test'
import { readdirSync, rmSync, writeFileSync, renameSync } from 'node:fs'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { TenantPool } from '../../src/tenant/pool.ts'
import { TenantUnavailableError } from '../../src/tenant/lease.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { memoryLogger } from '../../src/logger.ts'
import { tempDataDir, openTenant } from '../support/harness.ts'
import { writeStructure } from '../support/fixtures.ts'
import { parseTicketQuery } from '../../src/tickets/query.ts'
import { createCsvExportStream } from '../../src/export/csv-stream.ts'
import { TicketQueries } from '../../src/tickets/repository.ts'

const openFds = () => readdirSync('/proc/self/fd').length

function setup(organisations: number, maxOpen: number) {
  const temp = tempDataDir()
  const store = new ControlStore(temp.dir)
  const ids = Array.from({ length: organisations }, (_, i) =>
    createOrganisationWithTenant(store, { name: `Org ${i}`, plan: 'paid', apiEnabled: true, now: Date.now() }).id,
  )
  const logger = memoryLogger()
  const pool = new TenantPool({ dataDir: temp.dir, maxOpen, logger })
  return { temp, store, ids, pool, logger, cleanup: () => { pool.close(); store.close(); temp.cleanup() } }
}

let cleanup: (() => void) | undefined
afterEach(() => cleanup?.())

describe('TenantPool', () => {
  test('open files stay bounded by the cache size when many organisations are read', () => {
    const ctx = setup(60, 4)
    cleanup = ctx.cleanup
    const before = openFds()
    for (let round = 0; round < 3; round++) {
      for (const id of ctx.ids) {
        const lease = ctx.pool.acquire(id)
        lease.statement('SELECT count(*) FROM tickets').get()
        lease.release()
      }
    }
    expect(ctx.pool.stats()).toEqual({ open: 4, cached: 4, leased: 0 })
    // A WAL connection holds at most the database, -wal and -shm files.
    expect(openFds() - before).toBeLessThanOrEqual(4 * 3)
  })

  test('leases held across evictions keep their handle open; the last release closes it', () => {
    const ctx = setup(20, 2)
    cleanup = ctx.cleanup
    const before = openFds()
    const held = ctx.ids.slice(0, 10).map((id) => ctx.pool.acquire(id))
    // Ten leased handles, eight of them already evicted from a cache of two: all still usable.
    for (const lease of held) expect(lease.statement('SELECT count(*) AS n FROM locations').get()).toEqual({ n: 0 })
    expect(ctx.pool.stats()).toMatchObject({ open: 10, leased: 10, cached: 2 })
    const whileHeld = openFds() - before
    for (const lease of held) lease.release()
    expect(ctx.pool.stats()).toMatchObject({ open: 2, leased: 0 })
    expect(openFds() - before).toBeLessThan(whileHeld)
    expect(openFds() - before).toBeLessThanOrEqual(2 * 3)
  })

  test('an own lease is a second connection: checked like the shared one, counted while held, closed on release', () => {
    const ctx = setup(2, 4)
    cleanup = ctx.cleanup
    const shared = ctx.pool.acquire(ctx.ids[0]!)
    const own = ctx.pool.acquireOwn(ctx.ids[0]!)
    // A cached statement belongs to its connection: the own lease's is another.
    expect(own.statement('SELECT 1')).not.toBe(shared.statement('SELECT 1'))
    const again = ctx.pool.acquire(ctx.ids[0]!)
    expect(again.statement('SELECT 1')).toBe(shared.statement('SELECT 1'))
    again.release()
    expect(ctx.pool.stats()).toEqual({ open: 2, cached: 1, leased: 2 })
    expect(own.statement('SELECT count(*) AS n FROM tickets').get()).toEqual({ n: 0 })
    own.release()
    shared.release()
    expect(ctx.pool.stats()).toEqual({ open: 1, cached: 1, leased: 0 })
    expect(() => own.statement('SELECT 1', { fresh: true }).get()).toThrow()
    rmSync(tenantFilePath(ctx.temp.dir, ctx.ids[1]!))
    expect(() => ctx.pool.acquireOwn(ctx.ids[1]!)).toThrow(TenantUnavailableError)
    expect(ctx.pool.stats().leased).toBe(0)
  })

  test('release is idempotent', () => {
    const ctx = setup(1, 2)
    cleanup = ctx.cleanup
    const lease = ctx.pool.acquire(ctx.ids[0]!)
    lease.release()
    lease.release()
    expect(ctx.pool.stats().leased).toBe(0)
  })

  test('missing, garbage and unknown-version files are unavailable, logged once, and recover', () => {
    const ctx = setup(3, 4)
    cleanup = ctx.cleanup
    const [missing, garbage, newer] = ctx.ids as [string, string, string]
    rmSync(tenantFilePath(ctx.temp.dir, missing))
    writeFileSync(tenantFilePath(ctx.temp.dir, garbage), 'this is not a database'.repeat(200))
    const db = openTenant(ctx.temp.dir, newer)
    db.exec('PRAGMA user_version = 99')
    db.close()
    for (const id of [missing, garbage, newer]) {
      for (let i = 0; i < 3; i++) expect(() => ctx.pool.acquire(id)).toThrow(TenantUnavailableError)
    }
    const failures = ctx.logger.lines.filter((line) => line.includes('tenant_unavailable'))
    expect(failures).toHaveLength(3)
    expect(failures.join('\n')).not.toContain(ctx.temp.dir)

    // The administration application repairs the file: served again without a restart.
    const fixed = openTenant(ctx.temp.dir, newer)
    fixed.exec('PRAGMA user_version = 2')
    fixed.close()
    const lease = ctx.pool.acquire(newer)
    lease.release()
    expect(ctx.logger.lines.some((line) => line.includes('tenant_recovered'))).toBe(true)
  })

  test('a snapshot of a cached handle whose file was migrated in place to an unknown version is refused inside its transaction', () => {
    const ctx = setup(1, 4)
    cleanup = ctx.cleanup
    const [id] = ctx.ids as [string]
    ctx.pool.openSnapshot(id).close()
    const db = openTenant(ctx.temp.dir, id)
    db.exec('PRAGMA user_version = 99')
    db.close()
    expect(() => ctx.pool.openSnapshot(id)).toThrow(TenantUnavailableError)
    expect(ctx.pool.stats()).toEqual({ open: 0, cached: 0, leased: 0 })
    const fixed = openTenant(ctx.temp.dir, id)
    fixed.exec('PRAGMA user_version = 2')
    fixed.close()
    ctx.pool.openSnapshot(id).close()
    expect(ctx.pool.stats().leased).toBe(0)
  })

  test('a file replaced while open is reopened', () => {
    const ctx = setup(2, 4)
    cleanup = ctx.cleanup
    const [target, donor] = ctx.ids as [string, string]
    const first = ctx.pool.acquire(target)
    expect(first.statement('SELECT count(*) AS n FROM locations').get()).toEqual({ n: 0 })
    first.release()
    const donorDb = openTenant(ctx.temp.dir, donor)
    writeStructure(donorDb)
    donorDb.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    donorDb.close()
    renameSync(tenantFilePath(ctx.temp.dir, donor), tenantFilePath(ctx.temp.dir, target))
    const second = ctx.pool.acquire(target)
    expect(second.statement('SELECT count(*) AS n FROM locations').get()).toEqual({ n: 4 })
    second.release()
  })

  test('an organisation id that is not a safe file name never becomes a path', () => {
    const ctx = setup(0, 2)
    cleanup = ctx.cleanup
    for (const id of ['../control', 'a/b', 'org.sqlite', '', 'x'.repeat(65)]) {
      expect(() => ctx.pool.acquire(id)).toThrow(TenantUnavailableError)
    }
  })
})

describe('an export that fails before its first byte', () => {
  test('a bug of ours stays a bug (rethrown as it is, the file not marked broken); the lease is released', () => {
    const ctx = setup(1, 4)
    cleanup = ctx.cleanup
    const id = ctx.ids[0]!
    const query = parseTicketQuery(new URLSearchParams('from=2026-03-01&to=2026-03-02&queueId=q'), 'export')
    // A value bun:sqlite cannot bind: what a programming error upstream of the statement looks like.
    const broken = { ...query, filters: { ...query.filters, queueId: [Symbol('not bindable') as unknown as string] } }
    const snapshot = ctx.pool.openSnapshot(id, { own: true })
    let thrown: unknown
    try {
      createCsvExportStream({ snapshot, select: new TicketQueries().exportQuery(broken), demo: false, stallTimeoutMs: 60_000 })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(Error)
    expect(thrown).not.toBeInstanceOf(TenantUnavailableError)
    expect(ctx.pool.stats().leased).toBe(0)
    expect(ctx.logger.lines.filter((line) => line.includes('tenant_unavailable'))).toEqual([])
  })
})
