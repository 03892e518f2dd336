import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { openTenant, tempDataDir } from '../support/harness.ts'
import { writeStructure } from '../support/fixtures.ts'
import { startServerProcess, type ServerProcess } from '../support/server-process.ts'
import { eventually, eventuallyAsync } from '../support/raw-http.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { childrenOf } from '../support/processes.ts'
import { prometheusAvailable } from './support.ts'
import { startPrometheus, type PrometheusServer } from './prometheus-server.ts'

/**
 * What Prometheus itself records of WORKERS=2 while workers are killed outright and replaced
 * by a rolling restart under steady traffic: no counter reset (`resets()` is 0, so `rate()` and
 * `increase()` see no burst), and the supervisor's count of restarts.
 */
const available = redisAvailable() && prometheusAvailable()

describe.skipIf(!available)('a real prometheus scraping WORKERS=2 through kills and a rolling restart', () => {
  let dataDir: string
  let cleanup: () => void
  let token: string
  let redis: RedisServer
  let server: ServerProcess
  let prometheus: PrometheusServer

  beforeAll(async () => {
    ;({ dir: dataDir, cleanup } = tempDataDir())
    const store = new ControlStore(dataDir)
    const org = createOrganisationWithTenant(store, { name: 'Prometheus workers', plan: 'paid', apiEnabled: true, now: Date.now() })
    const db = openTenant(dataDir, org.id)
    writeStructure(db)
    db.close()
    token = store.createToken({ organisationId: org.id, name: 'metrics', createdAt: new Date().toISOString() }).token
    store.close()
    redis = await startRedis()
    server = await startServerProcess({ DATA_DIR: dataDir, REDIS_URL: redis.url, WORKERS: '2', METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '100000' })
    await eventually(() => server.output().includes('"workers":2}'), 15_000, 'both workers to listen')
    const metricsUrl = /"event":"metrics_listening","url":"([^"]+)"/.exec(server.output())![1]!
    prometheus = await startPrometheus(new URL(metricsUrl).host, '200ms')
  }, 60_000)
  afterAll(async () => {
    await prometheus?.stop()
    if (server) expect(await server.stop()).toBe(0)
    await redis?.stop()
    cleanup?.()
  })

  test('no counter reset while workers die and are replaced; the restarts counted', async () => {
    let running = true
    // Steady traffic, each request on a connection of its own so both workers get some.
    const traffic = (async () => {
      while (running) await fetch(`${server.base}/v1/queues`, { keepalive: false, headers: { Authorization: `Bearer ${token}` } }).then((response) => response.arrayBuffer()).catch(() => undefined)
    })()
    const scraped = (promql: string) => async () => ((await prometheus.query(promql)) ?? 0) > 0
    await eventuallyAsync(scraped('sum(queue_api_requests_total{operation="queues"})'), 20_000, 'a first scrape with requests')
    for (let kill = 1; kill <= 3; kill++) {
      const [victim] = childrenOf(server.process.pid)
      process.kill(victim!, 'SIGKILL')
      await eventually(() => (server.output().match(/"event":"worker_restarted"/g) ?? []).length === kill, 15_000, `restart ${kill}`)
      await Bun.sleep(600) // a few scrapes of the replacement's counts
    }
    server.process.kill('SIGHUP')
    await eventually(() => server.output().includes('"event":"reload_complete"'), 15_000, 'the rolling restart')
    await Bun.sleep(2500) // the old workers drained, scraped a few times since
    running = false
    await traffic

    await eventuallyAsync(async () => (await prometheus.query('queue_api_worker_restarts_total')) === 3, 10_000, 'the restarts to be scraped')
    expect(await prometheus.query('count_over_time(queue_api_requests_total{operation="queues",status="200"}[5m])')).toBeGreaterThan(20)
    expect(await prometheus.query('resets(queue_api_requests_total{operation="queues",status="200"}[5m])')).toBe(0)
    expect(await prometheus.query('resets(queue_api_request_duration_seconds_count{operation="queues"}[5m])')).toBe(0)
  }, 90_000)
})
