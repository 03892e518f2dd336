import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readlinkSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { standardTickets, writeBulkTickets, writeStructure, writeTickets } from '../support/fixtures.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { openTenantForWriting } from '../../src/tenant/files.ts'
import { TENANT_SCHEMA_VERSION } from '../../src/tenant/migrations.ts'

/** SQLite files this process has open (database, -wal and -shm), by path. */
function openSqliteFiles(): string[] {
  const files: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (/\.sqlite(-wal|-shm)?$/.test(target) && target.includes('/orgs/')) files.push(target)
    } catch {
      // closed meanwhile
    }
  }
  return files
}

describe('tenant pool churn: 200 organisations through a cache of 4', () => {
  let server: TestServer
  const tokens: string[] = []

  beforeAll(async () => {
    server = await startServer({ tenantCacheSize: 4, rateLimitPerMinute: 1_000_000 })
    for (let i = 0; i < 200; i++) {
      const { org, token } = server.organisation()
      const db = openTenant(server.dataDir, org.id)
      writeStructure(db)
      writeBulkTickets(db, { count: 2000, idPrefix: `org${i}-`, start: '2026-03-01' })
      db.close()
      tokens.push(token)
    }
  })
  afterAll(() => server.close())

  test('concurrent exports across them: every export complete, open files bounded by cache + leases', async () => {
    let peakFiles = 0
    let peakLeases = 0
    const sampler = setInterval(() => {
      peakFiles = Math.max(peakFiles, new Set(openSqliteFiles()).size)
      peakLeases = Math.max(peakLeases, server.app.pool.stats().leased)
    }, 2)
    const CONCURRENCY = 12
    let next = 0
    const worker = async () => {
      while (next < tokens.length) {
        const index = next++
        const response = await server.get('/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-03', tokens[index])
        expect(response.status).toBe(200)
        const lines = (await response.text()).split('\r\n')
        expect(lines.length).toBe(2000 + 2) // header, 2000 rows, final empty string
        expect(lines[1]).toStartWith(`org${index}-0000000,`) // its own data, read to the end
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    clearInterval(sampler)
    expect(server.app.pool.stats().leased).toBe(0)
    expect(server.app.pool.stats().open).toBeLessThanOrEqual(4)
    // Each open handle holds at most three files (database, -wal, -shm).
    expect(peakFiles).toBeLessThanOrEqual(3 * (4 + CONCURRENCY))
    expect(peakLeases).toBeGreaterThan(1)
    expect(server.logger.lines.filter((l) => l.includes('"level":"error"'))).toEqual([])
  }, 120_000)
})

describe('broken tenant files', () => {
  let server: TestServer
  let healthyToken: string

  beforeAll(async () => {
    server = await startServer({ rateLimitPerMinute: 1_000_000 })
    const healthy = server.organisation()
    healthyToken = healthy.token
    const db = openTenant(server.dataDir, healthy.org.id)
    writeStructure(db)
    writeTickets(db, standardTickets())
    db.close()
  })
  afterAll(() => server.close())

  /** An organisation with data whose file `breakIt` then damages. */
  function brokenOrganisation(breakIt: (path: string) => void, rows = 200) {
    const { org, token } = server.organisation()
    const db = openTenant(server.dataDir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: rows, start: '2026-03-01', everySeconds: 1, notesWidth: 200 })
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    db.close()
    return { org, token, path: tenantFilePath(server.dataDir, org.id) }
  }

  async function expectUnavailable(token: string) {
    for (const path of ['/v1/queues', '/v1/tickets?from=2026-03-01&to=2026-03-10&limit=500', '/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-10']) {
      const response = await server.get(path, token)
      expect({ path, status: response.status }).toEqual({ path, status: 503 })
      const body = (await response.json()) as { message: string }
      expect(body).toMatchObject({ error: 'data_unavailable' })
      // The kind of failure, in the service's words: never a path, nor SQLite's own message.
      expect(body.message).toMatch(/\(its data file (is missing|is damaged|is busy|cannot be read|has a schema version this release does not know)\)/)
      expect(body.message).not.toContain(server.dataDir)
      expect(body.message).not.toContain('SQLITE')
    }
  }

  const cases: [string, (path: string) => void, number?][] = [
    ['missing', (path) => rmSync(path)],
    ['zero-length', (path) => writeFileSync(path, '')],
    ['garbage bytes', (path) => writeFileSync(path, Buffer.alloc(64 * 1024, 0x5a))],
    ['truncated mid-page', (path) => truncateSync(path, Math.floor(statSync(path).size * 0.6) - 100), 20_000],
    ['an older schema version', (path) => { const db = openTenant(path.replace(/\/orgs\/.*/, ''), path.split('/').pop()!.replace('.sqlite', '')); db.exec('PRAGMA user_version = 0'); db.close() }],
    ['a newer schema version', (path) => { const db = openTenant(path.replace(/\/orgs\/.*/, ''), path.split('/').pop()!.replace('.sqlite', '')); db.exec(`PRAGMA user_version = ${TENANT_SCHEMA_VERSION + 1}`); db.close() }],
  ]

  for (const [name, breakIt, rows] of cases) {
    test(`${name}: 503 data_unavailable, logged once with the reason, others served, recovers when fixed`, async () => {
      const { org, token, path } = brokenOrganisation(breakIt, rows)
      expect((await server.get('/v1/queues', token)).status).toBe(200) // opened while healthy
      breakIt(path)
      await expectUnavailable(token)
      await expectUnavailable(token)
      const logged = server.logger.lines.filter((l) => l.includes('tenant_unavailable') && l.includes(org.id))
      expect(logged.length).toBeGreaterThanOrEqual(1)
      expect(logged.length).toBeLessThanOrEqual(2) // once per distinct reason (e.g. open vs read)
      expect(JSON.parse(logged[0]!).reason.length).toBeGreaterThan(5)
      expect(logged.join('')).not.toContain(server.dataDir)
      expect((await server.get('/v1/queues', healthyToken)).status).toBe(200)

      // The administration application restores the file: served again, no restart.
      rmSync(path, { force: true })
      rmSync(`${path}-wal`, { force: true })
      rmSync(`${path}-shm`, { force: true })
      const fixed = openTenantForWriting(server.dataDir, org.id)
      writeStructure(fixed)
      fixed.close()
      const response = await server.get('/v1/queues', token)
      expect(response.status).toBe(200)
      expect(((await response.json()) as { locations: unknown[] }).locations).toHaveLength(4)
    })
  }

  test('a file swapped while open: the new file is served on the next request', async () => {
    const first = brokenOrganisation(() => undefined, 10)
    const donor = brokenOrganisation(() => undefined, 25)
    const count = async () => ((await (await server.get('/v1/tickets?from=2026-03-01&to=2026-03-10&limit=500', first.token)).json()) as { items: unknown[] }).items.length
    expect(await count()).toBe(10)
    renameSync(donor.path, first.path) // atomic replace, as a careful writer does
    expect(await count()).toBe(25)
  })
})
