import type { Subprocess } from 'bun'
import type { Database } from 'bun:sqlite'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ControlStore } from '../src/control/store.ts'
import { createOrganisationWithTenant } from '../src/control/provisioning.ts'
import { litestreamConfig } from '../src/replica/litestream-config.ts'
import { restoreRound } from '../src/replica/restore.ts'
import { openTenant } from '../test/support/harness.ts'
import { writeBulkTickets, writeStructure } from '../test/support/fixtures.ts'
import { LITESTREAM, replicate } from '../test/support/litestream.ts'
import { startRedis } from '../test/support/redis-server.ts'
import { startServerProcess, type ServerProcess } from '../test/support/server-process.ts'
import { quantile, summarise } from './stats.ts'

/**
 * `npm run -s bench:replicas` (docs/performance.md#replicas): the replica recipe on one machine,
 * Litestream's npm package and the project's restore loop, and three figures:
 * - a restore round's cost with 1 and with 50 organisations: the first (every file), one with
 *   nothing shipped since, one after a write to one organisation (medians of --rounds);
 * - the lag from a ticket written on the writer to its first answer from a replica restoring
 *   `--every` seconds (the documented 5), p50 and max of --samples;
 * - the time from a revocation on the writer to 401 on both of two replicas, p50 and max.
 * `--only rounds` or `--only lag` runs one part.
 */
const { values } = parseArgs({ options: { every: { type: 'string', default: '5' }, samples: { type: 'string', default: '12' }, rounds: { type: 'string', default: '5' }, tickets: { type: 'string', default: '20000' }, only: { type: 'string' } } })
const EVERY = Number(values.every)
const SAMPLES = Number(values.samples)
const ROUNDS = Number(values.rounds)
const TICKETS = Number(values.tickets)
const DAY = 86_400_000
const root = mkdtempSync(join(tmpdir(), 'bench-replicas-'))
const children: Subprocess[] = []
const ms = (value: number) => `${Math.round(value)} ms`

function writer(name: string, organisations: number) {
  const dir = join(root, name, 'writer')
  const store = new ControlStore(dir)
  const ids: string[] = []
  for (let i = 0; i < organisations; i++) {
    const org = createOrganisationWithTenant(store, { name: `${name} ${i}`, plan: 'paid', apiEnabled: true, now: Date.now() })
    const db = openTenant(dir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: TICKETS, start: new Date(Date.now() - 60 * DAY).toISOString(), everySeconds: 250 })
    db.close()
    ids.push(org.id)
  }
  return { dir, store, ids, storage: `file://${join(root, name, 'storage')}` }
}

async function untilRestored(dataDir: string, from: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      if (restoreRound({ dataDir, from, litestream: LITESTREAM }).failed.length === 0) return
    } catch (error) {
      if (tries > 300) throw error
    }
    await Bun.sleep(200)
  }
}

/** Round costs with `organisations` organisations. */
async function roundCosts(organisations: number) {
  const w = writer(`orgs${organisations}`, organisations)
  const replication = replicate(litestreamConfig(w.dir, w.ids, w.storage), join(root, `orgs${organisations}`))
  const replica = join(root, `orgs${organisations}`, 'replica')
  mkdirSync(replica)
  await untilRestored(replica, w.storage)
  const round = () => restoreRound({ dataDir: replica, from: w.storage, litestream: LITESTREAM })
  // The first round of a fresh replica: every file.
  const fresh = join(root, `orgs${organisations}`, 'fresh')
  mkdirSync(fresh)
  const first = restoreRound({ dataDir: fresh, from: w.storage, litestream: LITESTREAM })
  const unchanged: number[] = []
  const oneChanged: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    unchanged.push(round().ms)
    const db = openTenant(w.dir, w.ids[i % w.ids.length]!)
    writeBulkTickets(db, { count: 10, idPrefix: `w${i}-`, start: new Date().toISOString() })
    db.close()
    await Bun.sleep(2000) // Litestream ships within its 1 s sync
    const r = round()
    oneChanged.push(r.ms)
  }
  await replication.stop()
  w.store.close()
  console.log(
    `${organisations} organisation(s) of ${TICKETS} tickets: first round ${ms(first.ms)} (${first.restored.length} files); nothing changed ${ms(summarise(unchanged).median)} (median of ${ROUNDS}); one organisation changed ${ms(summarise(oneChanged).median)}`,
  )
}

function restorer(dir: string, from: string): Subprocess {
  const child = Bun.spawn([process.execPath, 'src/cli/admin.ts', 'replica', 'restore', '--from', from, '--every', String(EVERY), '--litestream', LITESTREAM], { env: { ...process.env, DATA_DIR: dir }, stdout: 'ignore', stderr: 'ignore' })
  children.push(child)
  return child
}

async function until(condition: () => Promise<boolean>, limitMs = 60_000): Promise<number> {
  const started = performance.now()
  while (!(await condition())) {
    if (performance.now() - started > limitMs) throw new Error('timed out')
    await Bun.sleep(20)
  }
  return performance.now() - started
}

async function lagAndRevocation() {
  const w = writer('lag', 1)
  const replication = replicate(litestreamConfig(w.dir, w.ids, w.storage), join(root, 'lag'))
  const redis = await startRedis()
  const servers: ServerProcess[] = []
  for (const name of ['a', 'b']) {
    const dir = join(root, 'lag', name)
    mkdirSync(dir)
    await untilRestored(dir, w.storage)
    restorer(dir, w.storage)
    servers.push(await startServerProcess({ DATA_DIR: dir, READ_ONLY: '1', REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'info' }))
  }
  const token = w.store.createToken({ organisationId: w.ids[0]!, name: 'bench', createdAt: new Date().toISOString() }).token
  const ask = (server: ServerProcess, path: string, bearer = token) => fetch(server.base + path, { headers: { Authorization: `Bearer ${bearer}` } })
  await until(async () => (await Promise.all(servers.map((s) => ask(s, '/v1/queues')))).every((r) => r.status === 200))

  const tenant: Database = openTenant(w.dir, w.ids[0]!)
  const lags: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    await Bun.sleep(Math.random() * EVERY * 1000) // not in step with the rounds
    const written = Date.now()
    writeBulkTickets(tenant, { count: 1, idPrefix: `lag${i}-`, start: new Date(written - 1000).toISOString() })
    const range = `from=${new Date(written - 2000).toISOString()}&to=${new Date(written + 1000).toISOString()}`
    const server = servers[i % 2]!
    lags.push(await until(async () => ((await (await ask(server, `/v1/tickets?${range}`)).json()) as { items: { id: string }[] }).items.some((t) => t.id.startsWith(`lag${i}-`))))
  }
  tenant.close()
  const sorted = [...lags].sort((a, b) => a - b)
  console.log(`lag, ticket written → served by a replica (--every ${EVERY}, ${SAMPLES} samples): p50 ${ms(quantile(sorted, 0.5))}, max ${ms(sorted[sorted.length - 1]!)}`)

  const revocations: number[] = []
  for (let i = 0; i < Math.max(3, Math.floor(SAMPLES / 3)); i++) {
    const created = w.store.createToken({ organisationId: w.ids[0]!, name: `revoked ${i}`, createdAt: new Date().toISOString() })
    await until(async () => (await Promise.all(servers.map((s) => ask(s, '/v1/queues', created.token)))).every((r) => r.status === 200))
    await Bun.sleep(Math.random() * EVERY * 1000)
    const revokedAt = performance.now()
    w.store.revokeToken(created.record.id, new Date().toISOString())
    await Promise.all(servers.map((s) => until(async () => (await ask(s, '/v1/queues', created.token)).status === 401)))
    revocations.push(performance.now() - revokedAt)
  }
  const revoked = [...revocations].sort((a, b) => a - b)
  console.log(`revocation on the writer → 401 on both replicas (--every ${EVERY}, ${revoked.length} samples): p50 ${ms(quantile(revoked, 0.5))}, max ${ms(revoked[revoked.length - 1]!)}`)
  for (const server of servers) await server.stop()
  await replication.stop()
  await redis.stop()
  w.store.close()
}

try {
  // --only rounds | lag: one part.
  if (values.only !== 'lag') {
    await roundCosts(1)
    await roundCosts(50)
  }
  if (values.only !== 'rounds') await lagAndRevocation()
} finally {
  for (const child of children) child.kill('SIGKILL')
  rmSync(root, { recursive: true, force: true })
}
