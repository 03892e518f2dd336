import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { chmodSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { openTenant, tempDataDir } from '../support/harness.ts'
import { writeBulkTickets, writeStructure } from '../support/fixtures.ts'
import { runServerProcessToExit, startServerProcess, type ServerProcess } from '../support/server-process.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { copyDataDirForReplica, directoryState } from '../support/replica-copy.ts'

/**
 * READ_ONLY=1 (docs/operations.md#more-than-one-machine): a real server process over a replica's
 * copy of a data directory, made read-only, with a real redis-server. Root ignores the modes, so
 * "nothing written" is also checked by comparing every path's size, mtime and mode before and after.
 */
const available = redisAvailable()
const DAILY_QUOTA = 3

let writer: { dir: string; cleanup: () => void }
let replica: { dir: string; cleanup: () => void }
let replicaDir: string
let paidToken: string
let demoToken: string
let paidOrg: string
let redis: RedisServer

/** Makes every directory 0500 and every file 0400 under `dir` (or gives write back to the owner). */
function setWritable(dir: string, writable: boolean): void {
  const walk = (path: string) => {
    const isDir = statSync(path).isDirectory()
    if (isDir) for (const name of readdirSync(path)) walk(join(path, name))
    chmodSync(path, isDir ? (writable ? 0o700 : 0o500) : writable ? 0o600 : 0o400)
  }
  walk(dir)
}

beforeAll(async () => {
  writer = tempDataDir()
  replica = tempDataDir()
  replicaDir = join(replica.dir, 'data')
  const store = new ControlStore(writer.dir)
  const now = Date.now()
  const paid = createOrganisationWithTenant(store, { name: 'Replica paid', plan: 'paid', apiEnabled: true, now })
  const demo = createOrganisationWithTenant(store, { name: 'Replica demo', plan: 'demo', apiEnabled: true, now })
  for (const org of [paid, demo]) {
    const db = openTenant(writer.dir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 500, start: '2026-03-01', everySeconds: 60 })
    db.close()
  }
  const token = (organisationId: string) => store.createToken({ organisationId, name: 'replica', createdAt: new Date(now).toISOString() }).token
  paidToken = token(paid.id)
  demoToken = token(demo.id)
  paidOrg = paid.id
  store.close()
  copyDataDirForReplica(writer.dir, replicaDir)
  setWritable(replicaDir, false)
  if (available) redis = await startRedis()
})

afterAll(async () => {
  await redis?.stop()
  if (replicaDir) setWritable(replicaDir, true)
  replica?.cleanup()
  writer?.cleanup()
})

const get = (server: ServerProcess, path: string, token?: string) =>
  fetch(server.base + path, token ? { headers: { Authorization: `Bearer ${token}` } } : {})

const RANGE = 'from=2026-03-01&to=2026-03-02'

describe.skipIf(!available)('READ_ONLY=1 over a read-only copy', () => {
  test('serves pages, exports and the demo quota from Redis, writes nothing, logs no error, and is ready', async () => {
    const before = directoryState(replicaDir)
    const server = await startServerProcess({ DATA_DIR: replicaDir, READ_ONLY: '1', REDIS_URL: redis.url, DEMO_DAILY_QUOTA: String(DAILY_QUOTA) })
    try {
      expect((await get(server, '/readyz')).status).toBe(200)
      expect((await get(server, '/v1/queues', paidToken)).status).toBe(200)
      let cursor: string | null = null
      let rows = 0
      do {
        const response = await get(server, `/v1/tickets?${RANGE}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, paidToken)
        expect(response.status).toBe(200)
        const page = (await response.json()) as { items: unknown[]; nextCursor: string | null }
        rows += page.items.length
        cursor = page.nextCursor
      } while (cursor)
      expect(rows).toBe(500)
      const csv = await get(server, `/v1/exports/tickets.csv?${RANGE}`, paidToken)
      expect(csv.status).toBe(200)
      expect((await csv.text()).trim().split('\n')).toHaveLength(501)

      // The demo day is counted in Redis: exactly the quota, then 429.
      const statuses: number[] = []
      for (let i = 0; i < DAILY_QUOTA + 2; i++) statuses.push((await get(server, '/v1/queues', demoToken)).status)
      expect(statuses).toEqual([...Array(DAILY_QUOTA).fill(200), 429, 429])
      expect((await get(server, '/readyz')).status).toBe(200)
    } finally {
      // SIGTERM: the server's shutdown is when pending last-used times would be written.
      expect(await server.stop()).toBe(0)
    }
    // tcp_migrate_req_off is a warning about the host's kernel setting, redis_on_loopback about this test's one-machine Redis: not about the data directory.
    const problems = server.output().split('\n').filter((line) => /"level":"(warn|error)"/.test(line) && !line.includes('"event":"tcp_migrate_req_off"') && !line.includes('"event":"redis_on_loopback"'))
    expect(problems).toEqual([])
    // REDIS_URL=redis://127.0.0.1:…: on a replica, each machine would count in its own Redis.
    expect(server.output()).toMatch(/"level":"warn","event":"redis_on_loopback","hint":"REDIS_URL names this machine/)
    expect(directoryState(replicaDir)).toEqual(before)
  })

  test('a tenant copy in WAL mode is 503 data_unavailable, logged once, and gets no -wal or -shm beside it', async () => {
    const path = tenantFilePath(replicaDir, paidOrg)
    setWritable(replicaDir, true)
    const db = new Database(path)
    db.exec('PRAGMA journal_mode = WAL')
    db.close()
    setWritable(replicaDir, false)
    const before = directoryState(replicaDir)
    let after: Record<string, string> = {}
    const server = await startServerProcess({ DATA_DIR: replicaDir, READ_ONLY: '1', REDIS_URL: redis.url })
    try {
      for (let i = 0; i < 3; i++) {
        const response = await get(server, '/v1/queues', paidToken)
        expect(response.status).toBe(503)
        expect(((await response.json()) as { error: string }).error).toBe('data_unavailable')
      }
    } finally {
      await server.stop()
      after = directoryState(replicaDir)
      setWritable(replicaDir, true)
      const back = new Database(path)
      back.exec('PRAGMA journal_mode = DELETE')
      back.close()
      setWritable(replicaDir, false)
    }
    expect(server.output().match(/"event":"tenant_unavailable"/g)).toHaveLength(1)
    expect(after).toEqual(before)
  })
})

describe.skipIf(!available)('READ_ONLY=1: /readyz tells the truth', () => {
  test('a control.sqlite swapped for a WAL-mode copy while serving: /readyz and requests 503, until a good copy is back', async () => {
    const server = await startServerProcess({ DATA_DIR: replicaDir, READ_ONLY: '1', REDIS_URL: redis.url })
    const control = join(replicaDir, 'control.sqlite')
    const staged = join(replica.dir, 'control.sqlite')
    try {
      expect((await get(server, '/readyz')).status).toBe(200)
      setWritable(replicaDir, true)
      const source = new Database(control, { readonly: true })
      source.run('VACUUM INTO ?', [staged])
      source.close()
      const wal = new Database(staged)
      wal.exec('PRAGMA journal_mode = WAL')
      wal.close()
      renameSync(staged, control)
      expect((await get(server, '/readyz')).status).toBe(503)
      expect((await get(server, '/v1/queues', paidToken)).status).toBe(503)
      const back = new Database(control)
      back.exec('PRAGMA journal_mode = DELETE')
      back.close()
      expect((await get(server, '/readyz')).status).toBe(200)
      expect((await get(server, '/v1/queues', paidToken)).status).toBe(200)
    } finally {
      await server.stop()
      setWritable(replicaDir, false)
    }
  })
})

describe('READ_ONLY=1 refuses to start on what it cannot serve (exit 2, one line, nothing created)', () => {
  test('without REDIS_URL', async () => {
    const { status, stdout, stderr } = await runServerProcessToExit({ DATA_DIR: replicaDir, READ_ONLY: '1', PORT: '0' })
    expect(status).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toEqual(['configuration error: READ_ONLY=1 needs REDIS_URL: the minute window and the demo quota must be kept where they can be written'])
  })

  test.skipIf(!available)('on an empty data directory: no sample organisation is made', async () => {
    const empty = join(replica.dir, 'empty')
    mkdirSync(empty, { mode: 0o755 })
    const { status, stdout, stderr } = await runServerProcessToExit({ DATA_DIR: empty, READ_ONLY: '1', REDIS_URL: redis.url, PORT: '0' })
    expect(status).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toStartWith('data directory error: ')
    expect(stderr).toContain('control.sqlite does not exist')
    expect(readdirSync(empty)).toEqual([])
    expect(statSync(empty).mode & 0o777).toBe(0o755)
  })

  test.skipIf(!available)('on a control.sqlite in WAL mode (a copy that was not restored for a replica)', async () => {
    // The writer's own -wal and -shm may be there already (a connection of another test): only new ones count.
    const walFiles = () => readdirSync(writer.dir).filter((name) => name.endsWith('-wal') || name.endsWith('-shm'))
    const before = walFiles()
    const { status, stdout, stderr } = await runServerProcessToExit({ DATA_DIR: writer.dir, READ_ONLY: '1', REDIS_URL: redis.url, PORT: '0' })
    expect(status).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain('is in WAL mode')
    expect(walFiles()).toEqual(before)
  })
})
