import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { readFileSync } from 'node:fs'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { adminRunner } from '../support/admin-cli.ts'
import { openTenant } from '../support/harness.ts'
import { writeBulkTickets } from '../support/fixtures.ts'
import type { ServerProcess } from '../support/server-process.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { LITESTREAM } from '../support/litestream.ts'
import { haproxyAvailable, type Haproxy } from '../support/haproxy.ts'
import { ReplicaTopology, type Replica } from '../support/replica-topology.ts'
import { prometheusAvailable, runPromtool } from '../metrics/support.ts'

/**
 * Replicas an operator can leave alone (docs/operations.md#more-than-one-machine), every part
 * real: the writer's `admin replica ship` running Litestream (its npm package), two replicas
 * each refreshed by `admin replica restore --every 1` and served by READ_ONLY=1 with a short
 * REPLICA_MAX_AGE_S, one redis-server, HAProxy (Debian's) running deploy/haproxy/haproxy.cfg.
 * A replica whose restores stop leaves rotation and a revoked token is refused through HAProxy
 * within the bound; a new organisation is served by every replica with no config edited.
 */
const available = redisAvailable() && haproxyAvailable()
const NOW = Date.now()
const DAY = 86_400_000
const MAX_AGE_S = 3
/**
 * The documented bound on a revocation through the balancer: REPLICA_MAX_AGE_S, plus Litestream's
 * 1 s sync and HAProxy's two checks 500 ms apart; with margin for a machine shared by other tests.
 */
const REVOCATION_BOUND_MS = (MAX_AGE_S + 2) * 1000 + 5_000

let topology: ReplicaTopology
let writerDir: string
let redis: RedisServer
let shipper: Subprocess<'ignore', 'pipe', 'pipe'>
let shipped = ''
let haproxy: Haproxy
let replicas: Replica[]
let tokens: { loader: string; revoked: string; revokedId: string }
let firstOrgId: string
const writerAdmin = adminRunner(() => writerDir, NOW)

const get = (base: string, path: string, token?: string) => fetch(base + path, { headers: token ? { Authorization: `Bearer ${token}` } : {} })
const statusOf = async (base: string, path: string, token?: string) => {
  const response = await get(base, path, token)
  await response.arrayBuffer()
  return response.status
}

beforeAll(async () => {
  if (!available) return
  topology = new ReplicaTopology()
  ;({ writerDir, replicas } = topology)
  const writer = topology.seedWriter(NOW, [{ name: 'Hands off', plan: 'paid' }], { count: 200, start: new Date(NOW - 5 * DAY).toISOString(), everySeconds: 600 })
  firstOrgId = writer.ids[0]!
  const revoked = writer.token(firstOrgId, 'hands-off')
  tokens = { loader: writer.token(firstOrgId, 'hands-off').token, revoked: revoked.token, revokedId: revoked.id }
  writer.close()

  redis = await startRedis()
  shipper = Bun.spawn([process.execPath, 'src/cli/admin.ts', 'replica', 'ship', '--to', topology.storageUrl, '--every', '1', '--litestream', LITESTREAM, '--config', join(topology.root.dir, 'litestream.yml')], {
    env: { ...process.env, DATA_DIR: writerDir },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  void (async () => {
    const reader = shipper.stdout.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      shipped += new TextDecoder().decode(value)
    }
  })()
  for (const name of ['a', 'b']) {
    await topology.addReplica(name, 1, (dir) => ({ DATA_DIR: dir, READ_ONLY: '1', REDIS_URL: redis.url, REPLICA_MAX_AGE_S: String(MAX_AGE_S), RATE_LIMIT_PER_MINUTE: '1000000', METRICS_PORT: '0' }))
  }
  haproxy = await topology.balance()
}, 90_000)

afterAll(async () => {
  await topology?.stop()
  if (shipper) {
    shipper.kill('SIGTERM')
    await shipper.exited
  }
  await redis?.stop()
  topology?.cleanup()
})

/** The replica's own metrics (METRICS_PORT=0: the URL is in its log). */
async function scrape(server: ServerProcess): Promise<string> {
  const url = /"event":"metrics_listening","url":"([^"]+)"/.exec(server.output())?.[1]
  return (await fetch(url!)).text()
}

async function metricOf(server: ServerProcess, name: string): Promise<number | undefined> {
  const text = await scrape(server)
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.split(' ')[1])
}

describe.skipIf(!available)('replicas left alone', () => {
  test('a replica whose restores stop leaves rotation past REPLICA_MAX_AGE_S: a revoked token is refused through HAProxy within the bound, and it comes back when its restores resume', async () => {
    const [fresh, stale] = replicas as [(typeof replicas)[0], (typeof replicas)[0]]
    for (const replica of replicas) expect(await statusOf(replica.server.base, '/readyz')).toBe(200)
    expect(await metricOf(stale.server, 'queue_api_replica_copy_age_seconds')).toBeLessThan(MAX_AGE_S)
    expect(await metricOf(stale.server, 'queue_api_replica_copy_max_age_seconds')).toBe(MAX_AGE_S)
    expect(await metricOf(stale.server, 'queue_api_replica_unrestored_files')).toBe(0)
    if (prometheusAvailable()) expect(await runPromtool(['check', 'metrics'], await scrape(stale.server))).toEqual({ status: 0, output: '' })

    stale.restorer.kill('SIGKILL')
    await stale.restorer.exited
    const revokedAt = Date.now()
    expect(writerAdmin('token', 'revoke', tokens.revokedId).status).toBe(0)

    // Through HAProxy until 20 answers in a row are 401 (round robin: both replicas asked each time).
    let refusedSince: number | undefined
    let inARow = 0
    const seen: number[] = []
    while (inARow < 20) {
      const status = await statusOf(haproxy.base, '/v1/queues', tokens.revoked)
      seen.push(status)
      if (status === 401) {
        refusedSince ??= Date.now()
        inARow++
      } else {
        expect(status).toBe(200) // never anything but the copy's answer
        refusedSince = undefined
        inARow = 0
      }
      if (Date.now() - revokedAt > REVOCATION_BOUND_MS + 10_000) throw new Error(`HAProxy still lets the revoked token through: ${seen.slice(-20).join(' ')}`)
      await Bun.sleep(50)
    }
    const refusedAfter = refusedSince! - revokedAt
    console.log(`revocation → 401 on every replica in rotation (through HAProxy, one replica's restores stopped, REPLICA_MAX_AGE_S=${MAX_AGE_S}): ${refusedAfter} ms`)
    expect(refusedAfter).toBeLessThan(REVOCATION_BOUND_MS)

    // The stale one is out, and says why; its metric says how old it is.
    const ready = await get(stale.server.base, '/readyz')
    expect(ready.status).toBe(503)
    expect(ready.headers.get('retry-after')).toBe('5')
    expect(((await ready.json()) as { message: string }).message).toContain('longer than REPLICA_MAX_AGE_S (3 s)')
    expect(await metricOf(stale.server, 'queue_api_replica_copy_age_seconds')).toBeGreaterThan(MAX_AGE_S)
    expect(await statusOf(fresh.server.base, '/readyz')).toBe(200)
    expect(await statusOf(fresh.server.base, '/v1/queues', tokens.revoked)).toBe(401)

    // Restores resume: ready again, the revocation with it, and back in rotation.
    stale.restorer = topology.startRestorer(stale.dir, 1)
    const deadline = Date.now() + 30_000
    while ((await statusOf(stale.server.base, '/readyz')) !== 200) {
      if (Date.now() > deadline) throw new Error('the replica did not become ready again')
      await Bun.sleep(100)
    }
    expect(await statusOf(stale.server.base, '/v1/queues', tokens.revoked)).toBe(401)
    expect(await statusOf(stale.server.base, '/v1/queues', tokens.loader)).toBe(200)
  }, 90_000)

  test('a new organisation is shipped and served by every replica with no config edited; until then its token is 401 or 503 with Retry-After', async () => {
    const org = writerAdmin('org', 'create', '--name', 'Arrived later', '--json').json()
    const token = writerAdmin('token', 'create', '--org', org.id, '--name', 'new', '--json').json().token as string
    expect(writerAdmin('seed', '--org', org.id, '--days', '2', '--per-day', '20').status).toBe(0)
    const createdAt = Date.now()
    const servedAfter: number[] = []
    const answers = new Set<string>()
    for (const replica of replicas) {
      for (;;) {
        const response = await get(replica.server.base, '/v1/queues', token)
        const body = (await response.json()) as { error?: string }
        answers.add(`${response.status} ${body.error ?? ''}`.trim())
        if (response.status === 503) expect(response.headers.get('retry-after')).not.toBeNull()
        if (response.status === 200) break
        if (Date.now() - createdAt > 45_000) throw new Error(`the new organisation is not served by ${replica.server.base}: ${[...answers].join(', ')}`)
        await Bun.sleep(100)
      }
      servedAfter.push(Date.now() - createdAt)
    }
    console.log(`new organisation → served by each replica after, ms: ${servedAfter.join(', ')}; answers meanwhile: ${[...answers].join(', ')}`)
    expect([...answers].filter((answer) => !['200', '401 unauthorized', '503 data_unavailable'].includes(answer))).toEqual([])
    expect(shipped).toContain('organisations changed (1 added, 0 removed): litestream restarted with 2')
  }, 90_000)

  test('the shipper starts a Litestream that died again, and ships an organisation removed on the writer no more', async () => {
    const litestream = Number(readFileSync(`/proc/${shipper.pid}/task/${shipper.pid}/children`, 'utf8').trim().split(/\s+/)[0])
    expect(litestream).toBeGreaterThan(0)
    process.kill(litestream, 'SIGKILL')
    const killedAt = Date.now()
    while (!shipped.includes('litestream exited with status')) {
      if (Date.now() - killedAt > 15_000) throw new Error(`the shipper did not notice: ${shipped}`)
      await Bun.sleep(100)
    }
    // Shipping goes on: a ticket written now reaches a replica.
    const writer = openTenant(writerDir, firstOrgId)
    writeBulkTickets(writer, { count: 1, idPrefix: 'after-restart-', start: new Date(Date.now() - 1000).toISOString() })
    writer.close()
    const range = `from=${new Date(Date.now() - 60_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`
    for (;;) {
      const page = (await (await get(replicas[0]!.server.base, `/v1/tickets?${range}`, tokens.loader)).json()) as { items?: { id: string }[] }
      if (page.items?.some((item) => item.id.startsWith('after-restart-'))) break
      if (Date.now() - killedAt > 30_000) throw new Error('a ticket written after Litestream was restarted did not reach the replica')
      await Bun.sleep(200)
    }

    // No admin command removes an organisation: the application does, in control.sqlite.
    const control = new Database(join(writerDir, 'control.sqlite'))
    const removed = control.query("SELECT id FROM organisations WHERE name = 'Arrived later'").get() as { id: string }
    control.run('DELETE FROM api_tokens WHERE organisation_id = ?', [removed.id])
    control.run('DELETE FROM organisations WHERE id = ?', [removed.id])
    control.close()
    const removedAt = Date.now()
    while (!shipped.includes('(0 added, 1 removed): litestream restarted with 1')) {
      if (Date.now() - removedAt > 15_000) throw new Error(`the shipper did not notice the removal: ${shipped}`)
      await Bun.sleep(100)
    }
    expect(readFileSync(join(topology.root.dir, 'litestream.yml'), 'utf8')).not.toContain(removed.id)
  }, 90_000)
})
