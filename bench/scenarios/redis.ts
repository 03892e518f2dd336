import { cursorPaths } from '../cursors.ts'
import { inTurn, load, repeat, timeCalls, withServerCpu, type LoadResult } from '../measure.ts'
import { cpuOf, serviceProcesses, setCores, startRedis, type RedisServer } from '../processes.ts'
import { quantile, summarise } from '../stats.ts'
import type { Bench, Scenario } from '../scenario.ts'
import { systemClock } from '../../src/clock.ts'
import { MemoryRateLimiter } from '../../src/limits/memory-limiter.ts'
import { RedisConnection } from '../../src/limits/redis/connection.ts'
import { RedisRateLimiter } from '../../src/limits/redis/rate-limiter.ts'
import { RedisDemoQuota } from '../../src/limits/redis/demo-quota.ts'

/** A service under load: where it answers, and every process of it (the parent and its workers). */
interface Side {
  base: string
  pids: number[]
}

/** One load run with the CPU per request (µs) of the service's processes and of redis-server. */
type Run = LoadResult & { cpuPerRequest: number; redisCpu: number }

/**
 * What the limits in Redis (REDIS_URL) cost, against the embedded ones of the run's server, with
 * a redis-server of the scenario's own on the client's core (as if on another machine):
 * 1. JSON pages of 500 rows at 32 connections over 1,000 tokens, WORKERS=2 with Redis against
 *    WORKERS=1 embedded, in back-to-back pairs (each first in turn), with the service's CPU per
 *    request (parent and workers) and Redis's; the service's processes on core 0 on both sides,
 *    then WORKERS=2 unpinned (both cores, shared with the client and Redis).
 * 2. One process with and without REDIS_URL, both on core 0: Redis on the hot path (target ≥ 0.9×).
 * 3. The window check alone in this process (Redis then moved to core 0): p50 and p99 of
 *    RedisRateLimiter.consume against MemoryRateLimiter.consume, one call at a time and 32 at once.
 * 4. Redis's memory: a token's window, a demo organisation's day, and used_memory per each.
 */
export const redis: Scenario = {
  name: 'redis',
  title: 'the limits in Redis against the embedded ones: pages (WORKERS=2, one process), the window check alone, Redis memory',
  needs: ['big-tenant', 'server', 'redis-server'],
  async run(bench) {
    bench.log('The limits in Redis')
    const redisServer = await startRedis()
    try {
      await pagesWithRedis(bench, redisServer)
      await windowCheck(bench, redisServer)
      await redisMemory(bench, redisServer)
    } finally {
      await redisServer.stop()
    }
  },
}

async function pagesWithRedis({ big, server, report, settings, log, startService }: Bench, redisServer: RedisServer): Promise<void> {
  const paths = cursorPaths(big).ours
  const tokens = big.bigTokens.slice(0, 1000)
  const embedded: Side = { base: server.base, pids: server.pids }
  const measure = async (side: Side): Promise<Run> => {
    const redisBefore = cpuOf(redisServer.pid)
    const run = await withServerCpu(side.pids, () => load(side.base, paths, tokens, 32, settings.pairSeconds))
    return { ...run, redisCpu: ((cpuOf(redisServer.pid) - redisBefore) / run.total) * 1e6 }
  }
  /** The service started with `env`, measured against the embedded one in pairs; stopped after. */
  const againstEmbedded = async (env: Record<string, string>, name: string, unpinned = false) => {
    const handle = await startService({ ...env, REDIS_URL: redisServer.url }, name)
    try {
      const side: Side = { base: handle.base, pids: await serviceProcesses(handle, Number(env.WORKERS ?? '1')) }
      // Started on core 0 like every service here; unpinned, every process of it may use both cores.
      if (unpinned) setCores(side.pids, '0,1')
      await measure(side) // warm-up
      await measure(embedded)
      const pairs = await repeat(settings.pairs, (i) => inTurn(i, () => measure(side), () => measure(embedded)))
      return { ours: pairs.map(([ours]) => ours), base: pairs.map(([, base]) => base) }
    } finally {
      await handle.stop()
    }
  }
  const record = (figure: string, runs: { ours: Run[]; base: Run[] }, key: 'rps' | 'p99' | 'cpuPerRequest', unit: string, baselineName: string, target?: number) =>
    report.recordPairs(figure, runs.ours, runs.base, baselineName, (run) => run[key], unit, target === undefined ? undefined : { of: 'ratio', is: '>=', bound: target })
  const redisCpu = (figure: string, runs: { ours: Run[] }) => report.record({ figure, value: summarise(runs.ours.map((run) => run.redisCpu)), unit: 'µs' })

  log(`  pages of 500 rows, 32 connections: WORKERS=2 with Redis against WORKERS=1 embedded (${settings.pairs} pairs of ${settings.pairSeconds} s)`)
  const workers = await againstEmbedded({ WORKERS: '2' }, 'bench-redis-workers')
  record('pages, WORKERS=2 + Redis (service on core 0): req/s', workers, 'rps', 'req/s', 'WORKERS=1 embedded (core 0)')
  record('pages, WORKERS=2 + Redis (service on core 0): p99', workers, 'p99', 'ms', 'WORKERS=1 embedded')
  record('pages, WORKERS=2 + Redis: service CPU per request (parent + workers)', workers, 'cpuPerRequest', 'µs', 'WORKERS=1 embedded')
  redisCpu('pages, WORKERS=2 + Redis: redis-server CPU per request', workers)

  const unpinned = await againstEmbedded({ WORKERS: '2' }, 'bench-redis-workers-unpinned', true)
  record('pages, WORKERS=2 + Redis, unpinned (both cores, shared with the client and Redis): req/s', unpinned, 'rps', 'req/s', 'WORKERS=1 embedded (core 0)')
  record('pages, WORKERS=2 + Redis, unpinned: service CPU per request', unpinned, 'cpuPerRequest', 'µs', 'WORKERS=1 embedded')

  log(`  one process with and without REDIS_URL (${settings.pairs} pairs of ${settings.pairSeconds} s)`)
  const one = await againstEmbedded({}, 'bench-redis-one')
  record('pages, one process with REDIS_URL: req/s', one, 'rps', 'req/s', 'without (embedded)', 0.9)
  record('pages, one process with REDIS_URL: p99', one, 'p99', 'ms', 'without')
  record('pages, one process with REDIS_URL: service CPU per request', one, 'cpuPerRequest', 'µs', 'without')
  redisCpu('pages, one process with REDIS_URL: redis-server CPU per request', one)
}

async function windowCheck({ report, settings, log }: Bench, redisServer: RedisServer): Promise<void> {
  const calls = settings.quick ? 5_000 : 20_000
  log(`  the window check alone: ${settings.runs} runs of ${calls} calls, RedisRateLimiter.consume against MemoryRateLimiter.consume, in this process`)
  // No service runs now (the run's server is idle): Redis moves to core 0, so that it does not wait for this process's core.
  setCores([redisServer.pid], '0')
  const connection = new RedisConnection(redisServer.url)
  try {
    const shared = new RedisRateLimiter(connection, { limit: 1_000_000, keyPrefix: 'bench:' })
    const memory = new MemoryRateLimiter({ limit: 1_000_000, clock: systemClock })
    let turn = 0
    const key = () => `tok_${turn++ % 1000}`
    for (const concurrency of [1, 32]) {
      await timeCalls(() => shared.consume(key()), 2000, concurrency) // warm-up
      const runs = await repeat(settings.runs, (i) =>
        inTurn(
          i,
          () => timeCalls(() => shared.consume(key()), calls, concurrency),
          () => timeCalls(() => memory.consume(key()), calls, concurrency),
        ),
      )
      for (const [q, label] of [[0.5, 'p50'], [0.99, 'p99']] as const) {
        report.record({
          figure: `window check, ${concurrency === 1 ? 'one call at a time' : '32 calls at once'}: ${label}`,
          value: summarise(runs.map(([inRedis]) => quantile(inRedis, q))),
          unit: 'µs',
          baseline: { name: 'in memory', value: summarise(runs.map(([, inMemory]) => quantile(inMemory, q))) },
        })
      }
    }
  } finally {
    connection.close()
  }
}

async function redisMemory({ report, log }: Bench, redisServer: RedisServer): Promise<void> {
  log("  Redis's memory: MEMORY USAGE and the growth of used_memory")
  const connection = new RedisConnection(redisServer.url)
  try {
    const send = (command: string, ...args: string[]) => connection.send(command, args)
    const memoryUsage = async (key: string) => Number(await send('MEMORY', 'USAGE', key, 'SAMPLES', '0'))
    const usedMemory = async () => Number(/used_memory:(\d+)/.exec(String(await send('INFO', 'memory')))![1])
    await send('FLUSHALL')
    const limiter = new RedisRateLimiter(connection, { limit: 60 })
    const quota = new RedisDemoQuota(connection, { limit: 50 })
    await limiter.consume('tok_one')
    const oneRequest = await memoryUsage('limits:window:tok_one')
    for (let i = 1; i < 60; i++) await limiter.consume('tok_one')
    const fullWindow = await memoryUsage('limits:window:tok_one')
    await quota.consume('org_one')
    const dayCounter = await memoryUsage(((await send('KEYS', 'limits:quota:*')) as string[])[0]!)
    const beforeTokens = await usedMemory()
    await Promise.all(
      Array.from({ length: 1000 }, async (_, t) => {
        for (let i = 0; i < 60; i++) await limiter.consume(`tok_many_${t}`)
      }),
    )
    const perToken = ((await usedMemory()) - beforeTokens) / 1000
    const beforeOrganisations = await usedMemory()
    await Promise.all(Array.from({ length: 1000 }, (_, o) => quota.consume(`org_many_${o}`)))
    const perOrganisation = ((await usedMemory()) - beforeOrganisations) / 1000
    const once = (value: number) => summarise([value])
    report.record({ figure: "Redis: a token's window with 1 request (MEMORY USAGE)", value: once(oneRequest), unit: 'bytes' })
    report.record({ figure: "Redis: a token's window with 60 requests, full at the default limit (MEMORY USAGE)", value: once(fullWindow), unit: 'bytes' })
    report.record({ figure: 'Redis: used_memory growth per token, 1,000 tokens with 60 requests each', value: once(perToken), unit: 'bytes' })
    report.record({ figure: "Redis: a demo organisation's day counter (MEMORY USAGE)", value: once(dayCounter), unit: 'bytes' })
    report.record({ figure: 'Redis: used_memory growth per demo organisation, 1,000 organisations', value: once(perOrganisation), unit: 'bytes' })
  } finally {
    connection.close()
  }
}
