import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { MemoryExportSlots } from '../../src/limits/export-slots.ts'
import { MemoryRateLimiter } from '../../src/limits/memory-limiter.ts'
import { StoredDemoQuota } from '../../src/limits/stored-demo-quota.ts'
import { systemClock } from '../../src/clock.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { startMeteredServer, valueOf, type MeteredServer } from './support.ts'

/**
 * `queue_api_limits_backend_up` and the outage log lines (docs/operations.md#metrics): the
 * backend is checked on a timer of its own, so an idle service shows an outage and its end
 * without a request; and an outage of one backend is one line when it starts and one when it
 * ends, whatever the other backends answer meanwhile.
 */
const PROBE_MS = 200

/** Polls an asynchronous condition (a scrape) until it holds, for at most 10 s. */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

const outageLines = (server: MeteredServer) =>
  server.logger.lines.filter((line) => /"event":"limits_(unavailable|recovered)"/.test(line)).map((line) => {
    const { event, backend } = JSON.parse(line) as { event: string; backend: string }
    return `${event} ${backend}`
  })

describe.skipIf(!redisAvailable())('Redis, with no request at all', () => {
  let redis: RedisServer
  let server: MeteredServer
  beforeAll(async () => {
    redis = await startRedis()
    server = await startMeteredServer({ redisUrl: redis.url }, { limitsProbeEveryMs: PROBE_MS })
  })
  afterAll(async () => {
    await server?.close()
    await redis?.stop()
  })

  test('Redis killed: the gauge drops to 0 within seconds; started again: back to 1; one line each', async () => {
    const up = async () => valueOf(await server.scrape(), 'queue_api_limits_backend_up')
    await until(async () => (await up()) === 1, 'the gauge at 1')
    await redis.kill()
    await until(async () => (await up()) === 0, 'the gauge at 0 with Redis down')
    await Bun.sleep(5 * PROBE_MS) // more probes fail: still one line
    await redis.start()
    await until(async () => (await up()) === 1, 'the gauge back at 1')
    expect(outageLines(server)).toEqual(['limits_unavailable redis', 'limits_recovered redis'])
  })
})

describe('control.sqlite refusing writes (another process holds its write lock)', () => {
  let server: MeteredServer
  beforeAll(async () => {
    server = await startMeteredServer(
      {},
      {
        // The real embedded limits; the quota gives up on a held lock after 200 ms of real time (the server's clock is a manual one that this test does not move).
        // The real embedded limits; the quota gives up on a held lock after 200 ms instead of 10 s.
        limits: (store, clock) => ({
          limiter: new MemoryRateLimiter({ limit: 1000, clock }),
          quota: new StoredDemoQuota(store, 50, systemClock, 200),
          exportSlots: new MemoryExportSlots({ perToken: 2, max: 32 }),
        }),
      },
    )
  })
  afterAll(() => server?.close())

  test('demo requests 503 among paid 200s: one line when it starts failing, one when writes succeed again, found by the probe', async () => {
    const paid = server.seeded().token
    const demo = server.seeded({ plan: 'demo' }).token
    expect((await server.get('/v1/queues', demo)).status).toBe(200)

    const holder = new Database(join(server.dataDir, 'control.sqlite'))
    holder.exec('BEGIN IMMEDIATE')
    try {
      for (let i = 0; i < 3; i++) {
        expect((await server.get('/v1/queues', demo)).status).toBe(503)
        expect((await server.get('/v1/queues', paid)).status).toBe(200)
        await Bun.sleep(PROBE_MS) // a probe meanwhile finds the store still failing
      }
      const samples = await server.scrape()
      expect(valueOf(samples, 'queue_api_limits_backend_up')).toBe(0)
      // Each 503 counted by its cause, which the 5xx-ratio alert subtracts from its own.
      expect(valueOf(samples, 'queue_api_limits_unavailable_total')).toBe(3)
      expect(outageLines(server)).toEqual(['limits_unavailable control.sqlite'])
    } finally {
      holder.exec('ROLLBACK')
      holder.close()
    }
    // No demo request: the probe's write finds the store writable again.
    await until(async () => valueOf(await server.scrape(), 'queue_api_limits_backend_up') === 1, 'the gauge back at 1')
    expect(outageLines(server)).toEqual(['limits_unavailable control.sqlite', 'limits_recovered control.sqlite'])
    expect((await server.get('/v1/queues', demo)).status).toBe(200)
    expect(outageLines(server)).toHaveLength(2)
  })
})
