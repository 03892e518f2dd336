import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { queryDuckDb } from '../support/duckdb-query.ts'
import { openTenant, tempDataDir } from '../support/harness.ts'
import { writeBulkTickets } from '../support/fixtures.ts'
import { DAY, sync, tenantServer, tenantTickets, type Tenant } from '../support/sync-target-suite.ts'

/**
 * A full disk never breaks a DuckDB mirror (docs/loading.md#the-duckdb-file): on small tmpfs mounts
 * (root only: `mount -t tmpfs`), a first run and a later one either succeed with no
 * write-ahead log left, or fail with exit 1 and one line naming the folder and the space; the
 * file opens afterwards, holds whole windows and no duplicate, and a run with room finishes it.
 */

const root = process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0
const temp = tempDataDir()
let tenant: Tenant
beforeAll(async () => {
  if (root) tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
})
afterAll(async () => {
  await tenant?.server.close()
  temp.cleanup()
})

function mountTmpfs(dir: string, kilobytes: number) {
  mkdirSync(dir, { recursive: true })
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${kilobytes}k`, 'tmpfs', dir])
  if (mounted.status !== 0) throw new Error(`mount failed: ${mounted.stderr}`)
  return () => spawnSync('umount', [dir])
}

describe.skipIf(!root)('DuckDB on a full disk', () => {
  // Sizes around what 200 days of the fixture need (the file, its log, its spill and spool files).
  const sizes = [256, 512, 768, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 4096, 6144, 8192]
  test(`first runs into folders of ${sizes.join(', ')} KB: exit 0 with no .wal, or exit 1 naming the folder and its space; the file opens, the next run with room finishes it`, async () => {
    const since = Date.now() - 199 * DAY
    const outcomes: string[] = []
    const freeSaid: number[] = []
    const expected = tenantTickets(tenant, since).length
    for (const kilobytes of sizes) {
      const dir = join(temp.dir, `full-${kilobytes}`)
      const unmount = mountTmpfs(dir, kilobytes)
      const file = join(dir, 'mirror.duckdb')
      try {
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', new Date(since).toISOString()])
        outcomes.push(`${kilobytes}:${run.status}`)
        if (run.status === 0) {
          expect(existsSync(`${file}.wal`)).toBe(false)
        } else {
          expect(run.status).toBe(1)
          expect(run.stderr.trim().split('\n')).toHaveLength(1)
          const said = new RegExp(`^sync: no space left to write in ${dir} \\(the mirror's folder, which also holds its temporary files\\): ([0-9.]+) MB free (when the window began|before the last checkpoint|now)`).exec(run.stderr)
          expect({ stderr: run.stderr, said: said !== null }).toEqual({ stderr: run.stderr, said: true })
          // The space free before the writing, not after it filled the disk: within the mount, and not always 0.
          expect(Number(said![1])).toBeLessThanOrEqual(kilobytes / 1024 + 0.05)
          freeSaid.push(Number(said![1]))
        }
        // Nothing of the run's own is left but the mirror and its log.
        expect(readdirSync(dir).filter((name) => !/^mirror\.duckdb(\.wal)?$/.test(name))).toEqual([])
        if (existsSync(file)) {
          // It opens, and holds whole windows without a duplicate.
          const [counts] = await queryDuckDb(file, `SELECT count(*) AS n, count(DISTINCT id) AS d FROM tickets`)
          expect(Number(counts!.n)).toBe(Number(counts!.d))
        }
        // With room (the mount made larger), the next run finishes the mirror: equal, no log left.
        expect(spawnSync('mount', ['-o', 'remount,size=16m', dir]).status).toBe(0)
        const again = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', new Date(since).toISOString()])
        expect(again.status).toBe(0)
        expect(existsSync(`${file}.wal`)).toBe(false)
        const [counts] = await queryDuckDb(file, `SELECT count(*) AS n, count(DISTINCT id) AS d FROM tickets`)
        expect([Number(counts!.n), Number(counts!.d)]).toEqual([expected, expected])
      } finally {
        unmount()
      }
    }
    console.log(`disk-full outcomes (KB:exit): ${outcomes.join(' ')}`)
    expect(outcomes.some((outcome) => outcome.endsWith(':1'))).toBe(true)
    expect(freeSaid.some((megabytes) => megabytes > 0)).toBe(true)
    expect(outcomes.some((outcome) => outcome.endsWith(':0'))).toBe(true)
  }, 300_000)

  test('later runs on a disk filled to within 0 to 8 MB of full: exit 0 with no .wal, or exit 1 with the folder; the file opens, and with room again the mirror ends equal', async () => {
    const since = Date.now() - 199 * DAY
    const outcomes: string[] = []
    for (const [round, leftKilobytes] of [0, 128, 512, 1024, 2048, 3072, 4096, 8192].entries()) {
      const dir = join(temp.dir, `later-${round}`)
      const unmount = mountTmpfs(dir, 16 * 1024)
      const file = join(dir, 'mirror.duckdb')
      try {
        expect((await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', new Date(since).toISOString()])).status).toBe(0)
        // The writer adds and changes tickets; the disk is filled to leave `leftKilobytes`.
        const writer = openTenant(tenant.server.dataDir, tenant.orgId)
        writeBulkTickets(writer, { count: 3000, idPrefix: `later${round}-`, start: new Date(Date.now() - 20 * DAY).toISOString(), everySeconds: 500 })
        writer.close()
        const free = Number(statfsSync(dir).bavail) * Number(statfsSync(dir).bsize)
        writeFileSync(join(dir, 'filler'), Buffer.alloc(Math.max(0, free - leftKilobytes * 1024)))
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', file])
        outcomes.push(`${leftKilobytes}:${run.status}`)
        if (run.status === 0) expect(existsSync(`${file}.wal`)).toBe(false)
        else expect(run.stderr).toStartWith(`sync: no space left to write in ${dir} (the mirror's folder, which also holds its temporary files): `)
        const [counts] = await queryDuckDb(file, `SELECT count(*) AS n, count(DISTINCT id) AS d FROM tickets`)
        expect(Number(counts!.n)).toBe(Number(counts!.d))
        rmSync(join(dir, 'filler'))
        const again = await sync(tenant, ['--url', tenant.server.base, '--into', file])
        expect(again.status).toBe(0)
        expect(existsSync(`${file}.wal`)).toBe(false)
        const [after] = await queryDuckDb(file, `SELECT count(*) AS n FROM tickets`)
        expect(Number(after!.n)).toBe(tenantTickets(tenant, since).length)
      } finally {
        unmount()
      }
    }
    console.log(`disk-full later runs (KB left:exit): ${outcomes.join(' ')}`)
  }, 300_000)
})
