/**
 * `bun bench/redis-limits.ts`: what the limits in Redis cost (issue: more than one process).
 * On the benchmark's data (bench/data.ts), with a redis-server of its own on loopback:
 *
 * 1. JSON pages of 500 rows at 32 connections (autocannon): WORKERS=1 with the embedded limits
 *    against WORKERS=2 with REDIS_URL, in back-to-back pairs (who goes first alternating), with
 *    the service's CPU per request (parent and workers) and Redis's beside it. The service's
 *    processes share core 0 on both sides (the same CPU for both); Redis runs on core 1 with the
 *    client, as if it lived on another machine. Then WORKERS=2 unpinned: two cores for the
 *    workers, but shared with the client and Redis on this 2-core machine.
 * 2. One process with and without REDIS_URL, both on core 0: the cost of Redis on the hot path
 *    (target ≥ 0.9×).
 * 3. The window check alone, timed in this process (core 1, Redis then moved to core 0): p50/p99
 *    of RedisRateLimiter.consume, one call at a time and 32 at once, against
 *    MemoryRateLimiter.consume.
 * 4. Redis memory: MEMORY USAGE of a token's window (1 and 60 requests) and of a demo
 *    organisation's day, and the growth of used_memory per token over 1,000 full windows.
 *
 * Loopback only, bounded in time (about three minutes, plus building the data the first time).
 * Options: --pairs N (default 3), --seconds S per load run (default 3).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildData, type BenchData } from './data.ts'
import { CLIENT_CORE, cpuOf, ROOT, SERVER_CORE, startServer, track, TWO_CORES } from './processes.ts'
import { describeMachine } from './machine.ts'
import { summarise, type Summary } from './stats.ts'
import { systemClock } from '../src/clock.ts'
import { MemoryRateLimiter } from '../src/limits/memory-limiter.ts'
import { RedisConnection } from '../src/limits/redis/connection.ts'
import { RedisRateLimiter } from '../src/limits/redis/rate-limiter.ts'
import { RedisDemoQuota } from '../src/limits/redis/demo-quota.ts'

// Re-run pinned to the client core, as bench/run.ts does: this process and autocannon stay off core 0.
if (TWO_CORES && !process.env.BENCH_PINNED) {
  const child = Bun.spawn([...CLIENT_CORE, process.execPath, import.meta.path, ...process.argv.slice(2)], {
    env: { ...process.env, BENCH_PINNED: '1' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await child.exited)
}

const { values: options } = parseArgs({ options: { pairs: { type: 'string', default: '3' }, seconds: { type: 'string', default: '3' } }, strict: true })
const PAIRS = wholeNumber(options.pairs!, '--pairs')
const SECONDS = wholeNumber(options.seconds!, '--seconds')
const log = (line: string) => process.stderr.write(line + '\n')

function wholeNumber(raw: string, option: string): number {
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${option} needs a whole number of at least 1, got ${raw}`)
  return value
}

// ---- processes ---------------------------------------------------------------------------------

interface Redis {
  url: string
  pid: number
  cli(...args: string[]): string
}

async function startRedis(): Promise<Redis> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'))
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  // On the client's core: as if Redis ran on another machine, it takes nothing from the service's core.
  const proc = track(Bun.spawn([...CLIENT_CORE, 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdout: 'ignore' }))
  const cli = (...args: string[]) => Bun.spawnSync(['redis-cli', '-p', String(port), ...args]).stdout.toString().trim()
  for (let i = 0; cli('PING') !== 'PONG'; i++) {
    if (i > 200) throw new Error('redis-server did not start')
    await Bun.sleep(20)
  }
  return { url: `redis://127.0.0.1:${port}`, pid: proc.pid, cli }
}

interface Service {
  name: string
  base: string
  /** CPU seconds of every process of the service (the parent and its workers). */
  cpu(): number
  stop(): Promise<void>
}

/** The service with the benchmark's settings (limits raised so that nothing is refused). */
async function startService(data: BenchData, name: string, env: Record<string, string>, pinned = true): Promise<Service> {
  const settings = { RATE_LIMIT_PER_MINUTE: '1000000', TENANT_CACHE_SIZE: '256', ...env }
  const handle = await startServer(data.dataDir, settings, name)
  const workers = Number(env.WORKERS ?? '1')
  let pids = [handle.pid]
  if (workers > 1) {
    const deadline = Date.now() + 20_000
    while (!readFileSync(handle.logPath, 'utf8').includes(`"workers":${workers}}`)) {
      if (Date.now() > deadline) throw new Error(`${name}: the workers did not all listen`)
      await Bun.sleep(20)
    }
    const started = [...readFileSync(handle.logPath, 'utf8').matchAll(/"event":"worker_started","worker":\d+,"pid":(\d+)/g)]
    pids = [handle.pid, ...started.map((match) => Number(match[1]))]
  }
  // Started on core 0 like every service here; unpinned, every process (all its threads) may then use both cores.
  if (!pinned && TWO_CORES) for (const pid of pids) Bun.spawnSync(['taskset', '-a', '-p', '-c', '0,1', String(pid)], { stdout: 'ignore' })
  return { name, base: handle.base, cpu: () => pids.reduce((sum, pid) => sum + cpuOf(pid), 0), stop: handle.stop }
}

// ---- load --------------------------------------------------------------------------------------

interface LoadRun {
  rps: number
  p50: number
  p99: number
  total: number
  /** Service CPU µs per request (all its processes), and Redis's. */
  serviceCpu: number
  redisCpu: number
}

/** One autocannon run (bench/load.cjs, under Node, on this process's core) with the CPU the service and Redis used. */
async function load(service: Service, paths: string[], tokens: string[], redis: Redis): Promise<LoadRun> {
  const configFile = join(ROOT, 'bench', '.data', 'redis-limits-load.json')
  writeFileSync(configFile, JSON.stringify({ base: service.base, paths, tokens, connections: 32, duration: SECONDS }))
  const [serviceBefore, redisBefore] = [service.cpu(), cpuOf(redis.pid)]
  const proc = Bun.spawn(['node', join(ROOT, 'bench', 'load.cjs'), configFile], { stdout: 'pipe', stderr: 'inherit' })
  const result = JSON.parse(await new Response(proc.stdout).text()) as { rps: number; p50: number; p99: number; total: number; statuses: Record<string, number> }
  await proc.exited
  if (result.statuses.non2xx || result.statuses.errors) log(`  warning (${service.name}): ${JSON.stringify(result.statuses)}`)
  const perRequest = (seconds: number) => (seconds / result.total) * 1e6
  return { ...result, serviceCpu: perRequest(service.cpu() - serviceBefore), redisCpu: perRequest(cpuOf(redis.pid) - redisBefore) }
}

/** PAIRS back-to-back runs of `a` and `b`, who goes first alternating (this machine drifts over minutes). */
async function pairs(a: Service, b: Service, paths: string[], tokens: string[], redis: Redis): Promise<{ a: LoadRun[]; b: LoadRun[] }> {
  const out = { a: [] as LoadRun[], b: [] as LoadRun[] }
  for (const service of [a, b]) await load(service, paths, tokens, redis) // warm-up
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? [a, b] : [b, a]
    for (const service of order) (service === a ? out.a : out.b).push(await load(service, paths, tokens, redis))
  }
  return out
}

/** Paths of the first 40 pages of 500 rows of the big tenant, by following nextCursor once. */
async function pagePaths(base: string, data: BenchData, token: string): Promise<string[]> {
  const range = `from=${data.range1m.from}&to=${data.range1m.to}&limit=500`
  const paths = [`/v1/tickets?${range}`]
  while (paths.length < 40) {
    const response = await fetch(base + paths[paths.length - 1], { headers: { Authorization: `Bearer ${token}` } })
    const page = (await response.json()) as { nextCursor: string | null }
    if (!page.nextCursor) break
    paths.push(`/v1/tickets?${range}&cursor=${encodeURIComponent(page.nextCursor)}`)
  }
  return paths
}

// ---- report ------------------------------------------------------------------------------------

const rows: string[] = []
const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2))
const show = (s: Summary, unit: string) => `${fmt(s.median)} ${unit} (${fmt(s.min)}–${fmt(s.max)})`

function record(figure: string, value: Summary, unit: string, baseline?: { name: string; value: Summary; ratios?: Summary }, target?: { text: string; met: boolean }) {
  const ratio = baseline?.ratios ? `${baseline.ratios.median.toFixed(2)}× (${baseline.ratios.min.toFixed(2)}–${baseline.ratios.max.toFixed(2)})` : '—'
  const row = `| ${figure} | ${show(value, unit)} | ${baseline ? `${baseline.name}: ${show(baseline.value, unit)}` : '—'} | ${ratio} | ${target ? `${target.text}: ${target.met ? 'met' : 'missed'}` : '—'} |`
  rows.push(row)
  log(`  ${row}`)
}

/** Figures of paired runs: each side's median and the median of the pairs' ratios (a / b). */
function recordPairs(figure: string, runs: { a: LoadRun[]; b: LoadRun[] }, key: keyof LoadRun, unit: string, bName: string, target?: number) {
  const ratios = summarise(runs.a.map((run, i) => run[key] / runs.b[i]![key]))
  record(figure, summarise(runs.a.map((run) => run[key])), unit, { name: bName, value: summarise(runs.b.map((run) => run[key])), ratios }, target === undefined ? undefined : { text: `≥ ${target}×`, met: ratios.median >= target })
}

/** Latency of `call`, one at a time and `concurrency` at once; microseconds. */
async function timeCalls(call: () => Promise<unknown>, count: number, concurrency: number): Promise<number[]> {
  const times: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const started = performance.now()
        await call()
        times.push((performance.now() - started) * 1000)
      }
    }),
  )
  return times.sort((a, b) => a - b)
}
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

// ---- main --------------------------------------------------------------------------------------

const started = performance.now()
log('Building data in bench/.data (cached between runs)…')
const data = buildData(join(ROOT, 'bench', '.data'), log)
const redis = await startRedis()
const tokens = data.bigTokens.slice(0, 1000)

const embedded = await startService(data, 'redis-bench-embedded', {})
const paths = await pagePaths(embedded.base, data, tokens[0]!)
try {
  log(`1. Pages of 500 rows, 32 connections: WORKERS=1 embedded against WORKERS=2 with Redis (${PAIRS} pairs of ${SECONDS} s)`)
  const two = await startService(data, 'redis-bench-workers', { WORKERS: '2', REDIS_URL: redis.url })
  const multi = await pairs(two, embedded, paths, tokens, redis)
  await two.stop()
  recordPairs('pages, WORKERS=2 + Redis (service on core 0): req/s', multi, 'rps', 'req/s', 'WORKERS=1 embedded (core 0)')
  recordPairs('pages, WORKERS=2 + Redis (service on core 0): p99', multi, 'p99', 'ms', 'WORKERS=1 embedded')
  recordPairs('pages, WORKERS=2 + Redis: service CPU per request (parent + workers)', multi, 'serviceCpu', 'µs', 'WORKERS=1 embedded')
  record('pages, WORKERS=2 + Redis: redis-server CPU per request', summarise(multi.a.map((run) => run.redisCpu)), 'µs')

  const unpinned = await startService(data, 'redis-bench-workers-unpinned', { WORKERS: '2', REDIS_URL: redis.url }, false)
  const spread = await pairs(unpinned, embedded, paths, tokens, redis)
  await unpinned.stop()
  recordPairs('pages, WORKERS=2 + Redis, unpinned (both cores, shared with the client and Redis): req/s', spread, 'rps', 'req/s', 'WORKERS=1 embedded (core 0)')
  recordPairs('pages, WORKERS=2 + Redis, unpinned: service CPU per request', spread, 'serviceCpu', 'µs', 'WORKERS=1 embedded')

  log(`2. One process with and without REDIS_URL (${PAIRS} pairs of ${SECONDS} s)`)
  const oneWithRedis = await startService(data, 'redis-bench-one', { REDIS_URL: redis.url })
  const hot = await pairs(oneWithRedis, embedded, paths, tokens, redis)
  await oneWithRedis.stop()
  recordPairs('pages, one process with REDIS_URL: req/s', hot, 'rps', 'req/s', 'without (embedded)', 0.9)
  recordPairs('pages, one process with REDIS_URL: p99', hot, 'p99', 'ms', 'without')
  recordPairs('pages, one process with REDIS_URL: service CPU per request', hot, 'serviceCpu', 'µs', 'without')
  record('pages, one process with REDIS_URL: redis-server CPU per request', summarise(hot.a.map((run) => run.redisCpu)), 'µs')
} finally {
  await embedded.stop()
}

log('3. The window check alone (RedisRateLimiter.consume against MemoryRateLimiter.consume, in this process)')
// The service is stopped: Redis moves to core 0, so that it does not wait for this process's core.
if (TWO_CORES) Bun.spawnSync(['taskset', '-p', '-c', '0', String(redis.pid)])
const connection = new RedisConnection(redis.url)
const shared = new RedisRateLimiter(connection, { limit: 1_000_000, keyPrefix: 'bench:' })
const memory = new MemoryRateLimiter({ limit: 1_000_000, clock: systemClock })
let turn = 0
const key = () => `tok_${turn++ % 1000}`
for (const concurrency of [1, 32]) {
  await timeCalls(() => shared.consume(key()), 2000, concurrency) // warm-up
  const redisTimes = await timeCalls(() => shared.consume(key()), 20_000, concurrency)
  const memoryTimes = await timeCalls(() => memory.consume(key()), 20_000, concurrency)
  for (const [q, label] of [[0.5, 'p50'], [0.99, 'p99']] as const) {
    record(`window check, ${concurrency === 1 ? 'one call at a time' : '32 calls at once'}: ${label}`, summarise([quantile(redisTimes, q)]), 'µs', { name: 'in memory', value: summarise([quantile(memoryTimes, q)]) })
  }
}

log('4. Redis memory')
redis.cli('FLUSHALL')
const fresh = new RedisRateLimiter(connection, { limit: 60 })
const quota = new RedisDemoQuota(connection, { limit: 50 })
await fresh.consume('tok_one')
const oneRequest = Number(redis.cli('MEMORY', 'USAGE', 'limits:window:tok_one', 'SAMPLES', '0'))
for (let i = 1; i < 60; i++) await fresh.consume('tok_one')
const fullWindow = Number(redis.cli('MEMORY', 'USAGE', 'limits:window:tok_one', 'SAMPLES', '0'))
await quota.consume('org_one')
const dayKey = redis.cli('KEYS', 'limits:quota:*')
const dayCounter = Number(redis.cli('MEMORY', 'USAGE', dayKey, 'SAMPLES', '0'))
const usedMemory = () => Number(/used_memory:(\d+)/.exec(redis.cli('INFO', 'memory'))![1])
const before = usedMemory()
await Promise.all(Array.from({ length: 1000 }, async (_, t) => {
  for (let i = 0; i < 60; i++) await fresh.consume(`tok_many_${t}`)
}))
const perToken = (usedMemory() - before) / 1000
const beforeOrgs = usedMemory()
await Promise.all(Array.from({ length: 1000 }, (_, o) => quota.consume(`org_many_${o}`)))
const perOrg = (usedMemory() - beforeOrgs) / 1000
connection.close()
record("a token's window with 1 request (MEMORY USAGE)", summarise([oneRequest]), 'bytes')
record("a token's window with 60 requests, full at the default limit (MEMORY USAGE)", summarise([fullWindow]), 'bytes')
record('used_memory growth per token, 1,000 tokens with 60 requests each', summarise([perToken]), 'bytes')
record("a demo organisation's day counter (MEMORY USAGE)", summarise([dayCounter]), 'bytes')
record('used_memory growth per demo organisation, 1,000 organisations', summarise([perOrg]), 'bytes')

const machine = describeMachine()
const redisVersion = /redis_version:(\S+)/.exec(redis.cli('INFO', 'server'))?.[1] ?? 'unknown'
console.log(
  [
    `## Redis limits benchmark (${new Date().toISOString().slice(0, 10)})`,
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory}; Linux ${machine.kernel}; Bun ${machine.bun}, Node ${machine.node}, Redis ${redisVersion}.`,
    `${SERVER_CORE.length ? 'The service on core 0 (unless said), the client (autocannon) and Redis on core 1' : 'Not pinned: one core only'}. ${PAIRS} back-to-back pairs of ${SECONDS} s, who goes first alternating; median (min–max), ratio = median of the pairs' ratios. Window-check latencies from one run of 20,000 calls. Command: bun bench/redis-limits.ts${process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : ''}.`,
    '',
    '| figure | result | baseline (same run) | ratio | target |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Total time: ${((performance.now() - started) / 1000).toFixed(0)} s.`,
  ].join('\n'),
)
process.exit(0)
