import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { createServer } from 'node:net'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { openTenant, tempDataDir } from '../support/harness.ts'
import { writeBulkTickets, writeStructure } from '../support/fixtures.ts'
import { startServerProcess, type ServerProcess } from '../support/server-process.ts'
import { RawHttpClient, eventually } from '../support/raw-http.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { alive, listeners } from '../support/processes.ts'

/**
 * WORKERS=N and several servers on one Redis, with real processes (`bun src/main.ts`) and a real
 * redis-server: the limits hold exactly across processes, a dead worker is replaced, SIGTERM
 * drains every worker, and start-up refuses what cannot work.
 */
const available = redisAvailable()
const RATE_LIMIT = 25
const DAILY_QUOTA = 15

let dataDir: string
let cleanup: () => void
let paidToken: string
let demoTokens: string[]
let redis: RedisServer

beforeAll(async () => {
  ;({ dir: dataDir, cleanup } = tempDataDir())
  const store = new ControlStore(dataDir)
  const now = Date.now()
  const paid = createOrganisationWithTenant(store, { name: 'Workers paid', plan: 'paid', apiEnabled: true, now })
  const demo = createOrganisationWithTenant(store, { name: 'Workers demo', plan: 'demo', apiEnabled: true, now })
  for (const org of [paid, demo]) {
    const db = openTenant(dataDir, org.id)
    writeStructure(db)
    if (org === paid) writeBulkTickets(db, { count: 200_000, everySeconds: 30 }) // exports long enough to be caught mid-way
    db.close()
  }
  const token = (organisationId: string) => store.createToken({ organisationId, name: 'workers', createdAt: new Date(now).toISOString() }).token
  paidToken = token(paid.id)
  demoTokens = [token(demo.id), token(demo.id), token(demo.id)]
  store.close()
  if (available) redis = await startRedis()
})
afterAll(async () => {
  await redis?.stop()
  cleanup()
})

const env = () => ({ DATA_DIR: dataDir, REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), DEMO_DAILY_QUOTA: String(DAILY_QUOTA) })

/** `bun src/main.ts` with WORKERS=2, once the parent says that every worker listens. */
async function startWorkers(extra: Record<string, string> = {}): Promise<ServerProcess & { workerPids(): number[] }> {
  const server = await startServerProcess({ ...env(), WORKERS: '2', ...extra })
  await eventually(() => server.output().includes('"workers":2}'), 15_000, 'both workers to listen')
  return {
    ...server,
    workerPids: () => [...server.output().matchAll(/"event":"worker_started","worker":\d+,"pid":(\d+)/g)].map((match) => Number(match[1])),
  }
}

/** A process that is expected to exit without listening: its exit status and what it printed. */
async function runToExit(extra: Record<string, string>, unset: string[] = []) {
  const childEnv: Record<string, string | undefined> = { ...process.env, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, ...extra }
  for (const name of unset) delete childEnv[name]
  const child = Bun.spawn([process.execPath, 'src/main.ts'], {
    env: childEnv,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()])
  clearTimeout(timer)
  return { code, stdout, stderr }
}

const get = (base: string, token: string, path = '/v1/queues') => fetch(base + path, { headers: { Authorization: `Bearer ${token}` } })
const portOf = (base: string) => Number(new URL(base).port)
describe('start-up refuses what cannot work (exit 2, one line)', () => {
  test('WORKERS=2 without REDIS_URL', async () => {
    const { code, stdout, stderr } = await runToExit({ WORKERS: '2' }, ['REDIS_URL'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toContain('WORKERS=2 needs REDIS_URL')
  })

  test.skipIf(!available)('WORKERS=2 on a port another program listens on', async () => {
    const other = createServer()
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    const port = (other.address() as { port: number }).port
    try {
      const { code, stderr } = await runToExit({ ...env(), WORKERS: '2', PORT: String(port) })
      expect(code).toBe(2)
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(`PORT ${port} on 127.0.0.1 is already in use`)
      expect(stderr).toContain('already in use')
    } finally {
      other.close()
    }
  })
})

describe.skipIf(!available)('WORKERS=2 and separate servers on one Redis', () => {
  beforeEach(() => redis.cli('FLUSHALL')) // each test starts with empty windows and days

  test('two workers listen on one port; one token and one demo organisation are held exactly to their limits across every process, also in concurrent bursts', async () => {
    const workers = await startWorkers()
    const single = await startServerProcess(env())
    const another = await startServerProcess(env())
    try {
      expect(listeners(portOf(workers.base), workers.workerPids()).sort()).toEqual([...workers.workerPids()].sort())
      const bases = [workers.base, single.base, another.base]

      // One token, three times its limit at once, spread over the three servers.
      const burst = await Promise.all(Array.from({ length: 3 * RATE_LIMIT }, (_, i) => get(bases[i % 3]!, paidToken)))
      const statuses = burst.map((response) => response.status)
      expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT)
      expect(statuses.filter((status) => status === 429)).toHaveLength(2 * RATE_LIMIT)
      expect(await Promise.all(burst.filter((r) => r.status === 429).map(async (r) => ((await r.json()) as { error: string }).error))).toEqual(Array(2 * RATE_LIMIT).fill('rate_limited'))
      // Whichever process answers next sees the same window.
      for (const base of bases) expect((await get(base, paidToken)).headers.get('x-ratelimit-remaining')).toBe('0')

      // One demo organisation (three tokens, each under its own window), three times its day at once.
      const days = await Promise.all(Array.from({ length: 3 * DAILY_QUOTA }, (_, i) => get(bases[i % 3]!, demoTokens[Math.floor(i / 3) % 3]!)))
      expect(days.filter((response) => response.status === 200)).toHaveLength(DAILY_QUOTA)
      const refused = days.filter((response) => response.status === 429)
      expect(refused).toHaveLength(2 * DAILY_QUOTA)
      for (const response of refused) expect(((await response.json()) as { error: string }).error).toBe('demo_quota_exceeded')
      // Refused requests consumed nothing: the tokens' windows hold the day's counted requests
      // and no more (this request, refused by the quota too, shows its window without itself).
      const counted = await Promise.all(demoTokens.map(async (token) => RATE_LIMIT - Number((await get(workers.base, token)).headers.get('x-ratelimit-remaining'))))
      expect(counted.reduce((a, b) => a + b, 0)).toBe(DAILY_QUOTA)
      expect((await get(single.base, demoTokens[0]!)).status).toBe(429)
    } finally {
      await Promise.all([workers.stop(), single.stop(), another.stop()])
    }
  }, 60_000)

  test('a worker that dies is logged and restarted; /healthz answers from the other meanwhile', async () => {
    const workers = await startWorkers()
    try {
      const [victim] = workers.workerPids() as [number]
      process.kill(victim, 'SIGKILL')
      await eventually(() => workers.output().includes(`"event":"worker_exited","worker":0,"pid":${victim}`), 5000, 'the death to be logged')
      const health = await Promise.all(Array.from({ length: 20 }, () => fetch(`${workers.base}/healthz`, { keepalive: false })))
      expect(health.map((response) => response.status)).toEqual(Array(20).fill(200))
      await eventually(() => workers.output().includes('"event":"worker_restarted","worker":0'), 5000, 'the restart')
      const pids = workers.workerPids()
      expect(pids).toHaveLength(3)
      await eventually(() => listeners(portOf(workers.base), pids).length === 2, 5000, 'two listeners again')
      expect(listeners(portOf(workers.base), pids)).not.toContain(victim)
    } finally {
      await workers.stop()
    }
  }, 60_000)

  test('SIGTERM to the parent drains every worker: exports in flight finish whole, then all exit 0', async () => {
    const workers = await startWorkers({ SHUTDOWN_DRAIN_MS: '20000', EXPORTS_PER_TOKEN: '6' }) // 6 exports of one token at once
    const pids = workers.workerPids()
    // Several connections: the kernel spreads them over both workers.
    const path = '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31'
    const exports = await Promise.all(Array.from({ length: 6 }, () => RawHttpClient.get(workers.base, path, { Authorization: `Bearer ${paidToken}`, Connection: 'close' }, { paused: true })))
    await eventually(() => (workers.output().match(/"event":"request"/g) ?? []).length >= 6, 10_000, 'the exports to start')
    workers.process.kill('SIGTERM')
    await eventually(() => (workers.output().match(/"event":"shutdown_started"/g) ?? []).length === 3, 5000, 'every process to start its shutdown')
    // The six exports were in flight in the workers when their shutdown began.
    const inFlight = [...workers.output().matchAll(/"event":"shutdown_started","signal":"SIGTERM","inFlight":(\d+)/g)].map((match) => Number(match[1]))
    expect(inFlight).toHaveLength(2)
    expect(inFlight[0]! + inFlight[1]!).toBe(6)
    for (const running of exports) running.resume()
    await Promise.all(exports.map((running) => running.closed))
    for (const running of exports) {
      expect(running.text()).toMatch(/^HTTP\/1\.1 200/)
      expect(running.text().endsWith('\r\n0\r\n\r\n')).toBe(true)
    }
    expect(await workers.process.exited).toBe(0)
    expect(workers.output()).toContain('"event":"shutdown_complete","workers":2,"clean":true')
    expect(pids.filter(alive)).toEqual([])
  }, 60_000)

  test('workers whose parent was killed stop by themselves', async () => {
    const workers = await startWorkers()
    const pids = workers.workerPids()
    workers.process.kill('SIGKILL')
    await workers.process.exited
    await eventually(() => pids.filter(alive).length === 0, 10_000, 'the orphaned workers to stop')
  }, 30_000)
})
