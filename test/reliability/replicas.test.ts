import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { everyResponseHeaders } from '../../src/http/response-headers.ts'
import { Client, DataUnavailableError } from '../../src/client/index.ts'
import { litestreamConfig } from '../../src/replica/litestream-config.ts'
import { adminRunner } from '../support/admin-cli.ts'
import { openTenant } from '../support/harness.ts'
import { writeBulkTickets } from '../support/fixtures.ts'
import { startServerProcess } from '../support/server-process.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { replicate, type Replication } from '../support/litestream.ts'
import { checkHaproxyConfig, HAPROXY_CONFIG, haproxyAvailable, startHaproxy, type Haproxy } from '../support/haproxy.ts'
import { freePort } from '../support/free-port.ts'
import { eventually } from '../support/raw-http.ts'
import { ReplicaTopology, type Replica } from '../support/replica-topology.ts'
import { queryDuckDb } from '../support/duckdb-query.ts'

/**
 * The recipe of docs/operations.md#more-than-one-machine on one machine, every part real: a
 * writer's data directory replicated by Litestream (its npm package) to a file:// replica; two
 * replicas, each refreshed by `admin replica restore --every N` and served by a READ_ONLY=1
 * server; one redis-server; HAProxy (Debian's) in front, health-checking /readyz. `sync` loads
 * through HAProxy while tickets are written and a replica is killed and started again. Bounded:
 * about a minute. Prints the replication lag and pages@32 through HAProxy and direct.
 */
const available = redisAvailable() && haproxyAvailable()
const DAY = 86_400_000
const NOW = Date.now()
const DAILY_QUOTA = 10
/** The lag the docs promise: Litestream's 1 s sync, the replica's round (every 1 or 3 s here) and its own time, and margin for a shared machine. */
const DOCUMENTED_LAG_MS = 10_000

let topology: ReplicaTopology
let root: { dir: string }
let writerDir: string
let redis: RedisServer
let replication: Replication
let haproxy: Haproxy
let replicas: Replica[]
let orgId: string
let tokens: { loader: string; demo: string; revoked: string; revokedId: string }
const writerAdmin = adminRunner(() => writerDir, NOW)

const serverEnv = (dir: string) => ({ DATA_DIR: dir, READ_ONLY: '1', REDIS_URL: redis.url, DEMO_DAILY_QUOTA: String(DAILY_QUOTA), RATE_LIMIT_PER_MINUTE: '1000000' })

const get = (base: string, path: string, token: string) => fetch(base + path, { headers: { Authorization: `Bearer ${token}` } })

beforeAll(async () => {
  if (!available) return
  topology = new ReplicaTopology()
  ;({ root, writerDir, replicas } = topology)
  const writer = topology.seedWriter(
    NOW,
    [
      { name: 'Replicated', plan: 'paid' },
      { name: 'Replicated demo', plan: 'demo' },
    ],
    { count: 2000, start: new Date(NOW - 20 * DAY).toISOString(), everySeconds: 800 },
  )
  const [paid, demo] = writer.ids as [string, string]
  const revoked = writer.token(paid, 'topology')
  tokens = { loader: writer.token(paid, 'topology').token, demo: writer.token(demo, 'topology').token, revoked: revoked.token, revokedId: revoked.id }
  orgId = paid
  writer.close()

  redis = await startRedis()
  replication = replicate(litestreamConfig(writerDir, [paid, demo], topology.storageUrl), root.dir)
  // Replica a is refreshed every second, b every 3: b's copy is often behind a's, as replicas are.
  for (const [name, everySeconds] of [['a', 1], ['b', 3]] as const) await topology.addReplica(name, everySeconds, serverEnv)
  haproxy = await topology.balance()
}, 60_000)

afterAll(async () => {
  await topology?.stop()
  await replication?.stop()
  await redis?.stop()
  topology?.cleanup()
})

/** Inserts `count` tickets created just now, with ids from `prefix`. */
function writeNewTickets(db: Database, prefix: string, count: number): void {
  writeBulkTickets(db, { count, idPrefix: prefix, start: new Date(Date.now() - 60_000).toISOString(), everySeconds: 1 })
}

/** The writer's tickets as the mirror should hold them. */
function writerTickets(): { id: string; status: string; completed_at: string | null }[] {
  const db = openTenant(writerDir, orgId)
  try {
    return db.query('SELECT id, status, completed_at FROM tickets WHERE created_at >= ? ORDER BY id').all(new Date(NOW - 89 * DAY).toISOString()) as never
  } finally {
    db.close()
  }
}

async function mirrorTickets(file: string) {
  const rows = await queryDuckDb(file, `SELECT id, status, strftime(completed_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS completed_at FROM tickets ORDER BY id`)
  return rows
}

function runSync(file: string): Promise<{ stdout: string; stderr: string; status: number }> {
  const child = Bun.spawn([process.execPath, 'src/sync/cli.ts', '--url', haproxy.base, '--into', file, '--json'], {
    env: { ...process.env, API_TOKEN: tokens.loader },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  return Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]).then(([stdout, stderr, status]) => ({ stdout, stderr, status }))
}

/** Milliseconds from a ticket written on the writer to the replica's first answer that serves it. */
async function lagOf(base: string, writer: Database, id: string): Promise<number> {
  const written = Date.now()
  writeBulkTickets(writer, { count: 1, idPrefix: id, start: new Date(written - 1000).toISOString() })
  const range = `from=${new Date(written - 2000).toISOString()}&to=${new Date(written + 1000).toISOString()}`
  for (;;) {
    const page = (await (await get(base, `/v1/tickets?${range}&limit=500`, tokens.loader)).json()) as { items?: { id: string }[] }
    if (page.items?.some((item) => item.id.startsWith(id))) return Date.now() - written
    if (Date.now() - written > 30_000) throw new Error(`ticket ${id} not served by ${base} within 30 s`)
    await Bun.sleep(25)
  }
}

/** Pages of /v1/tickets per second with 32 clients for `ms`. */
async function pagesPerSecond(base: string, ms: number): Promise<number> {
  const range = `from=${new Date(NOW - 20 * DAY).toISOString()}&to=${new Date(NOW).toISOString()}&limit=100`
  const end = Date.now() + ms
  let pages = 0
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (Date.now() < end) {
        const response = await get(base, `/v1/tickets?${range}`, tokens.loader)
        await response.arrayBuffer()
        if (response.status === 200) pages++
      }
    }),
  )
  return Math.round(pages / (ms / 1000))
}

describe.skipIf(!available)('replicas behind HAProxy, fed by Litestream', () => {
  test('the replication lag, writer → each replica, is within the documented bound', async () => {
    const writer = openTenant(writerDir, orgId)
    try {
      const lags: number[] = []
      for (let i = 0; i < 4; i++) lags.push(await lagOf(replicas[i % 2]!.server.base, writer, `lag${i}-`))
      console.log(`replication lag (ticket written on the writer → served by a replica), ms: ${lags.join(', ')}`)
      expect(Math.max(...lags)).toBeLessThan(DOCUMENTED_LAG_MS)
    } finally {
      writer.close()
    }
  }, 60_000)

  test('a changes token from the fresher replica: the lagging one answers 503 copy_behind, never 400 nor fewer rows', async () => {
    const [fresh, lagging] = [replicas[0]!.server.base, replicas[1]!.server.base]
    const writer = openTenant(writerDir, orgId)
    const answers: string[] = []
    try {
      for (let i = 0; i < 6 && !answers.includes('503 copy_behind'); i++) {
        await lagOf(fresh, writer, `probe${i}-`)
        const range = `from=${new Date(NOW - 20 * DAY).toISOString()}&to=${new Date(Date.now() + DAY).toISOString()}`
        const token = (await get(fresh, `/v1/tickets?${range}&limit=1`, tokens.loader)).headers.get('x-changes-token')!
        const response = await get(lagging, `/v1/tickets?${range}&changedAfter=${encodeURIComponent(token)}`, tokens.loader)
        const body = (await response.json()) as { error?: string }
        answers.push(`${response.status} ${body.error ?? ''}`.trim())
        if (response.status === 503) expect(response.headers.get('retry-after')).toBe('1')
      }
    } finally {
      writer.close()
    }
    expect(answers).toContain('503 copy_behind')
    expect(answers.filter((answer) => answer !== '503 copy_behind' && answer !== '200')).toEqual([])
  }, 60_000)

  test('sync through HAProxy while tickets are written and a replica is killed and restarted: the mirror equals the writer', async () => {
    const mirror = join(root.dir, 'mirror.duckdb')
    const first = await runSync(mirror)
    expect(first.stderr).toBe('')
    expect(first.status).toBe(0)

    const writer = openTenant(writerDir, orgId)
    let writing = true
    const writes = (async () => {
      for (let round = 0; writing; round++) {
        writeNewTickets(writer, `w${round}-`, 20)
        // And changes to tickets the mirror already holds.
        writer.run(`UPDATE tickets SET status = 'CANCELED', completed_at = NULL WHERE id IN (SELECT id FROM tickets WHERE status = 'COMPLETED' ORDER BY random() LIMIT 5)`)
        await Bun.sleep(200)
      }
    })()
    const runs: { status: number; stdout: string; stderr: string }[] = []
    const loading = (async () => {
      while (writing) {
        runs.push(await runSync(mirror))
        // A run makes two requests: one more between runs now and then sends its export to the other replica.
        if (runs.length % 2 === 1) await (await get(haproxy.base, '/v1/queues', tokens.loader)).arrayBuffer()
      }
    })()
    await Bun.sleep(1500)
    const killed = replicas[1]!
    killed.server.process.kill('SIGKILL')
    await killed.server.process.exited
    await Bun.sleep(2500)
    killed.server = await startServerProcess({ ...serverEnv(killed.dir), PORT: String(killed.port) })
    await Bun.sleep(2000)
    writing = false
    await Promise.all([writes, loading])
    writer.close()

    // After the lag, one more run brings the mirror level with the writer.
    const expected = writerTickets()
    const deadline = Date.now() + 30_000
    let mirrored: Record<string, unknown>[] = []
    for (;;) {
      const run = await runSync(mirror)
      runs.push(run)
      mirrored = await mirrorTickets(mirror)
      if (JSON.stringify(mirrored) === JSON.stringify(expected) || Date.now() > deadline) break
      await Bun.sleep(500)
    }
    const behind = replicas.map((replica) => replica.server.output().split('"status":503').length - 1)
    const exports = replicas.map((replica) => replica.server.output().split('"path":"/v1/exports/tickets.csv"').length - 1)
    console.log(`exports answered per replica: ${exports.join(', ')}`)
    console.log(`sync runs through HAProxy during the writes and the restart: ${runs.length}, exit statuses ${[...new Set(runs.map((run) => run.status))].join(',')}; 503 answered (per replica, copy_behind: no other 503 is expected): ${behind.join(', ')}`)
    expect(runs.filter((run) => run.status !== 0).map((run) => run.stderr)).toEqual([])
    // The writer deletes nothing: a run that deleted from the mirror reconciled against a copy that lagged.
    expect(runs.map((run) => JSON.parse(run.stdout).tickets.deleted)).toEqual(runs.map(() => 0))
    expect(mirrored.length).toBe(expected.length)
    expect(mirrored).toEqual(expected)
  }, 90_000)

  test("the demo quota is exact across replicas (one Redis): the day's requests, then 429", async () => {
    const statuses: number[] = []
    for (let i = 0; i < DAILY_QUOTA + 3; i++) statuses.push((await get(haproxy.base, '/v1/queues', tokens.demo)).status)
    expect(statuses).toEqual([...Array(DAILY_QUOTA).fill(200), 429, 429, 429])
    // Round robin: both replicas answered some of them (their logs are written in batches, 50 ms apart).
    for (const replica of replicas) await eventually(() => replica.server.output().includes('"path":"/v1/queues"'), 5_000, `the log of the replica on port ${replica.port}`)
  })

  test('a token revoked on the writer is refused by every replica within the documented lag', async () => {
    for (const replica of replicas) expect((await get(replica.server.base, '/v1/queues', tokens.revoked)).status).toBe(200)
    const revoked = Date.now()
    expect(writerAdmin('token', 'revoke', tokens.revokedId).status).toBe(0)
    const refusedAfter: number[] = []
    for (const replica of replicas) {
      while ((await get(replica.server.base, '/v1/queues', tokens.revoked)).status !== 401) {
        if (Date.now() - revoked > DOCUMENTED_LAG_MS) throw new Error(`${replica.server.base} still accepts the revoked token`)
        await Bun.sleep(25)
      }
      refusedAfter.push(Date.now() - revoked)
    }
    console.log(`revocation refused by both replicas after, ms: ${refusedAfter.join(', ')}`)
  }, 30_000)

  test('pages@32 through HAProxy and on one replica direct (a shared machine: a bounded look, not a benchmark)', async () => {
    const through = await pagesPerSecond(haproxy.base, 3000)
    const direct = await pagesPerSecond(replicas[0]!.server.base, 3000)
    console.log(`pages/s with 32 clients: through HAProxy (2 replicas) ${through}, one replica direct ${direct}`)
    expect(through).toBeGreaterThan(0)
    expect(direct).toBeGreaterThan(0)
  }, 30_000)
})

describe.skipIf(!available)('deploy/haproxy/haproxy.cfg', () => {
  test('is valid (haproxy -c), as shipped and as the tests run it', () => {
    for (const file of [HAPROXY_CONFIG, join(root.dir, 'haproxy.cfg')]) {
      const { status, output } = checkHaproxyConfig(file)
      expect(output).toContain('Configuration file is valid')
      expect(status).toBe(0)
    }
  })

  test("with no replica ready, HAProxy's own 503 is the API's JSON error body with Retry-After", async () => {
    const idle = await startHaproxy(root.dir, [await freePort()], { waitReady: false })
    try {
      const response = await fetch(`${idle.base}/v1/queues`)
      expect(response.status).toBe(503)
      expect(response.headers.get('content-type')).toBe('application/json')
      expect(response.headers.get('retry-after')).toBe('5')
      const body = (await response.json()) as Record<string, string>
      expect(Object.keys(body)).toEqual(['error', 'message', 'requestId'])
      expect(body.error).toBe('data_unavailable')
      expect(body.requestId).toBe(response.headers.get('x-request-id')!)
      // The headers every API answer has (nosniff, CORS): a browser reads this 503 like the API's own.
      for (const [name, value] of Object.entries(everyResponseHeaders(body.requestId!, true))) expect({ name, value: response.headers.get(name) }).toEqual({ name, value })
    } finally {
      await idle.stop()
    }
  })

  test("the client waits the Retry-After of HAProxy's 503 (5 s), not its shorter backoff, then gives up", async () => {
    const idle = await startHaproxy(root.dir, [await freePort()], { waitReady: false })
    try {
      const sleeps: number[] = []
      const client = new Client({ baseUrl: idle.base, token: 'qa_unused', maxAttempts: 3, sleep: async (ms) => void sleeps.push(ms) })
      expect(await client.queues().catch((e) => e)).toBeInstanceOf(DataUnavailableError)
      expect(sleeps).toEqual([5000, 5000])
    } finally {
      await idle.stop()
    }
  })
})

test('docs/operations.md points at deploy/haproxy/haproxy.cfg', () => {
  const docs = readFileSync(join(import.meta.dir, '../../docs/operations.md'), 'utf8')
  expect(docs).toContain('deploy/haproxy/haproxy.cfg')
})
