import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { adminRunner, type AdminRun } from '../support/admin-cli.ts'
import { openTenant, tempDataDir } from '../support/harness.ts'
import { writeBulkTickets, writeStructure } from '../support/fixtures.ts'
import { LITESTREAM, replicate, type Replication } from '../support/litestream.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { readCopyState } from '../../src/replica/copy-state.ts'
import { directoryState } from '../support/replica-copy.ts'
import { redisForFile } from '../support/redis-server.ts'
import { runServerProcessToExit, startServerProcess } from '../support/server-process.ts'

/**
 * `admin replica litestream-config` and `admin replica restore` with the real Litestream
 * (its npm package): the writer's directory replicated to a file:// replica, restored into a
 * replica's directory as rollback-mode copies.
 */

const NOW = Date.parse('2026-03-10T12:00:00.000Z')
let root: { dir: string; cleanup: () => void }
let writerDir: string
let replicaDir: string
let replicaUrl: string
let replication: Replication | undefined
const writer = adminRunner(() => writerDir, NOW)
const onReplica = adminRunner(() => replicaDir, NOW)
const orgIds: string[] = []
const redis = redisForFile()

beforeAll(() => {
  root = tempDataDir()
  writerDir = join(root.dir, 'writer')
  replicaDir = join(root.dir, 'replica')
  replicaUrl = `file://${join(root.dir, 'storage')}`
  mkdirSync(replicaDir)
  for (const name of ['Replica one', 'Replica two']) {
    const org = writer('org', 'create', '--name', name, '--json').json()
    const db = openTenant(writerDir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 100 })
    db.close()
    orgIds.push(org.id)
  }
  // Created at the same instant: listed, and restored, in id order.
  orgIds.sort()
})

afterAll(async () => {
  await replication?.stop()
  root.cleanup()
})

function expectUsageError(result: AdminRun, fragment: string) {
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).toContain(fragment)
}

const ticketCount = (dataDir: string, orgId: string) => {
  const db = new Database(tenantFilePath(dataDir, orgId), { readonly: true })
  try {
    return (db.query('SELECT count(*) AS n FROM tickets').get() as { n: number }).n
  } finally {
    db.close()
  }
}

/** Restores until the replica has `count` tickets of `orgId` (Litestream ships within a second or so). */
async function restoreUntil(orgId: string, count: number): Promise<AdminRun> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const run = onReplica('replica', 'restore', '--from', replicaUrl, '--litestream', LITESTREAM, '--json')
    if (run.status === 0 && ticketCount(replicaDir, orgId) === count) return run
    if (Date.now() > deadline) throw new Error(`the replica did not reach ${count} tickets: ${run.stdout}${run.stderr}`)
    await Bun.sleep(200)
  }
}

describe('admin replica litestream-config', () => {
  test('lists control.sqlite and every tenant file, each under the replica URL', () => {
    const run = writer('replica', 'litestream-config', '--to', `${replicaUrl}/`)
    expect(run.status).toBe(0)
    const paths = [...run.stdout.matchAll(/- path: "([^"]+)"/g)].map((match) => match[1])
    const urls = [...run.stdout.matchAll(/- url: "([^"]+)"/g)].map((match) => match[1])
    expect(paths).toEqual([resolve(writerDir, 'control.sqlite'), ...orgIds.map((id) => tenantFilePath(resolve(writerDir), id))])
    expect(urls).toEqual([`${replicaUrl}/control.sqlite`, ...orgIds.map((id) => `${replicaUrl}/orgs/${id}.sqlite`)])
    expect(writer('replica', 'litestream-config', '--to', replicaUrl, '--json').json()).toMatchObject({ organisations: 2 })
  })

  test('wrong input: exit 2, one line', () => {
    expectUsageError(writer('replica', 'litestream-config'), '--to is required')
    expectUsageError(writer('replica', 'litestream-config', '--to', 'http://example.com/x'), 'a replica URL starts with file://')
    expectUsageError(writer('replica', 'litestream-config', '--to', 'not a url'), 'is not a URL')
    expectUsageError(writer('replica'), 'replica needs litestream-config, ship or restore')
    expectUsageError(writer('replica', 'promote'), 'unknown command "replica promote"')
    expectUsageError(onReplica('replica', 'restore', '--from', replicaUrl, '--litestream', join(root.dir, 'no-such-litestream')), 'cannot run')
    expectUsageError(onReplica('replica', 'restore', '--from', replicaUrl, '--every', '0', '--litestream', LITESTREAM), '--every must be a whole number from 1')
    expectUsageError(onReplica('replica', 'restore', '--from', replicaUrl, '--every', '5', '--json', '--litestream', LITESTREAM), 'without --every')
    // None of it created anything in the replica's directory.
    expect(readdirSync(replicaDir)).toEqual([])
  })
})

describe('admin replica restore', () => {
  test('nothing replicated yet: exit 1, one line, nothing put in place', () => {
    const run = onReplica('replica', 'restore', '--from', replicaUrl, '--litestream', LITESTREAM)
    expect(run.status).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toStartWith('admin: restore failed: control.sqlite: ')
    expect(run.stderr).toContain('no matching backups found')
    expect(readdirSync(replicaDir)).toEqual([])
  })

  test("copies of the writer's files, in rollback mode, swapped in; a later write arrives with the next round", async () => {
    replication = replicate(writer('replica', 'litestream-config', '--to', replicaUrl).stdout, root.dir)
    const first = await restoreUntil(orgIds[0]!, 100)
    expect(first.json().restored).toEqual([...orgIds.map((id) => `orgs/${id}.sqlite`), 'control.sqlite'])
    expect(ticketCount(replicaDir, orgIds[1]!)).toBe(100)
    for (const file of ['control.sqlite', ...orgIds.map((id) => `orgs/${id}.sqlite`)]) {
      const db = new Database(join(replicaDir, file), { readonly: true })
      expect(db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'delete' })
      db.close()
    }
    // Nothing but the served files and the copy's state is left behind (no staging, no -wal or -shm).
    expect(readdirSync(replicaDir).sort()).toEqual(['.replica.json', 'control.sqlite', 'orgs'])
    expect(readdirSync(join(replicaDir, 'orgs')).sort()).toEqual(orgIds.map((id) => `${id}.sqlite`).sort())

    const db = openTenant(writerDir, orgIds[0]!)
    writeBulkTickets(db, { count: 50, idPrefix: 'later' })
    db.close()
    const later = await restoreUntil(orgIds[0]!, 150)
    // Only what changed: the other organisation's file was left as it was.
    expect(later.json().restored).not.toContain(`orgs/${orgIds[1]}.sqlite`)
  })

  test('a round with nothing shipped since restores nothing, and records the copy confirmed current', async () => {
    const before = readCopyState(replicaDir)!
    await Bun.sleep(20)
    const round = onReplica('replica', 'restore', '--from', replicaUrl, '--litestream', LITESTREAM, '--json').json()
    const after = readCopyState(replicaDir)!
    // control.sqlite may have moved (a write on the writer's side); the tenant files have not.
    expect(round.restored.filter((file: string) => file !== 'control.sqlite')).toEqual([])
    expect(round.unchanged).toBeGreaterThanOrEqual(2)
    expect(Date.parse(after.confirmedAt)).toBeGreaterThan(Date.parse(before.confirmedAt))
    expect(after.from).toBe(replicaUrl)
    expect(Object.keys(after.positions).sort()).toEqual(['control.sqlite', ...orgIds.map((id) => `orgs/${id}.sqlite`)].sort())
    expect(after.unrestored).toEqual([])
  })

  test("into a writer's directory (data, no .replica.json): refused, exit 2, one line, nothing changed", () => {
    const state = directoryState(writerDir)
    expectUsageError(writer('replica', 'restore', '--from', replicaUrl, '--litestream', LITESTREAM), "is not a replica's data directory")
    expectUsageError(writer('replica', 'restore', '--from', replicaUrl, '--every', '5', '--litestream', LITESTREAM), "is not a replica's data directory")
    expect(directoryState(writerDir)).toEqual(state)
  })

  test('the copy state is private to the service user (0600)', () => {
    expect(statSync(join(replicaDir, '.replica.json')).mode & 0o777).toBe(0o600)
  })

  test("a replica's directory refuses every admin command that writes, and the writer's own: exit 2, one line naming the writer; it reads", () => {
    const state = directoryState(replicaDir)
    const writes = [
      ['org', 'create', '--name', 'On a replica'],
      ['org', 'update', orgIds[0]!, '--plan', 'demo'],
      ['token', 'create', '--org', orgIds[0]!, '--name', 'x'],
      ['token', 'revoke', 'tok_x'],
      ['seed', '--org', orgIds[0]!],
      ['migrate'],
      ['check', '--org', orgIds[0]!],
      ['replica', 'litestream-config', '--to', replicaUrl],
    ]
    for (const argv of writes) expectUsageError(onReplica(...argv), "is a replica's data directory")
    expectUsageError(onReplica('token', 'create', '--org', orgIds[0]!, '--name', 'x'), 'token create refused: ')
    expect(onReplica('token', 'create', '--org', orgIds[0]!, '--name', 'x').stderr).toContain('run it on the writer')
    expect(onReplica('org', 'list', '--json').stdout).toContain(orgIds[1]!)
    expect(onReplica('token', 'list', '--org', orgIds[0]!).status).toBe(0)
    expect(directoryState(replicaDir)).toEqual(state)
  })

  test('an organisation Litestream does not replicate yet: the others restored, it named, exit 1; a server on the copy answers its token 503 with Retry-After and /readyz names the file', async () => {
    const late = writer('org', 'create', '--name', 'Late', '--json').json()
    const lateToken = writer('token', 'create', '--org', late.id, '--name', 'late', '--json').json().token
    // control.sqlite, replicated, now names it; its file is not in Litestream's config.
    const deadline = Date.now() + 15_000
    let run: AdminRun
    do {
      await Bun.sleep(200)
      run = onReplica('replica', 'restore', '--from', replicaUrl, '--litestream', LITESTREAM, '--json')
    } while (!run.stdout.includes(late.id) && Date.now() < deadline)
    expect(run.status).toBe(1)
    const round = run.json()
    expect(round.failed.map((failure: { file: string }) => failure.file)).toEqual([`orgs/${late.id}.sqlite`])
    expect(round.restored).toContain('control.sqlite')
    expect(existsSync(tenantFilePath(replicaDir, late.id))).toBe(false)
    expect(readCopyState(replicaDir)!.unrestored.map((entry) => entry.file)).toEqual([`orgs/${late.id}.sqlite`])

    if (!redis.available) return
    const server = await startServerProcess({ DATA_DIR: replicaDir, READ_ONLY: '1', REDIS_URL: redis.url })
    try {
      const response = await fetch(`${server.base}/v1/queues`, { headers: { Authorization: `Bearer ${lateToken}` } })
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('10')
      expect(await response.json()).toMatchObject({ error: 'data_unavailable', message: expect.stringContaining('(its data file is not restored on this replica yet)') })
      const ready = await fetch(`${server.base}/readyz`)
      expect(ready.status).toBe(200)
      expect(await ready.json()).toEqual({ status: 'ready', unrestored: [`orgs/${late.id}.sqlite`] })
    } finally {
      await server.stop()
    }
  })

  test("an organisation deleted on the writer: the next round removes its file from the replica", async () => {
    const gone = orgIds[1]!
    expect(existsSync(tenantFilePath(replicaDir, gone))).toBe(true)
    expect(writer('org', 'delete', gone, '--yes').status).toBe(0)
    const deadline = Date.now() + 15_000
    let run: AdminRun
    do {
      await Bun.sleep(200)
      run = onReplica('replica', 'restore', '--from', replicaUrl, '--litestream', LITESTREAM, '--json')
    } while (existsSync(tenantFilePath(replicaDir, gone)) && Date.now() < deadline)
    expect(existsSync(tenantFilePath(replicaDir, gone))).toBe(false)
    expect(run.json().removed).toEqual([`orgs/${gone}.sqlite`])
    expect(Object.keys(readCopyState(replicaDir)!.positions)).not.toContain(`orgs/${gone}.sqlite`)
    expect(existsSync(tenantFilePath(replicaDir, orgIds[0]!))).toBe(true)
  })

  test('a server without READ_ONLY=1 refuses a replica\'s directory: exit 2, one line, nothing written', async () => {
    const state = directoryState(replicaDir)
    const { status, stdout, stderr } = await runServerProcessToExit({ DATA_DIR: replicaDir, PORT: '0' })
    expect(status).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain("refusing to serve without READ_ONLY=1: ")
    expect(stderr).toContain("is a replica's data directory")
    expect(directoryState(replicaDir)).toEqual(state)
  })
})
