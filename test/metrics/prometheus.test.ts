import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { prometheusAvailable, prometheusBinary, startMeteredServer, type MeteredServer } from './support.ts'

/**
 * A real prometheus (Debian's package), started by the test on a free loopback port with a temp
 * configuration and data directory, scrapes the metrics listener every second with the shipped
 * alert rules loaded; a PromQL query then gives the number of requests the test made.
 */
const available = prometheusAvailable()

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((done) => probe.listen({ host: '127.0.0.1', port: 0 }, done))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((done) => probe.close(() => done()))
  return port
}

describe.skipIf(!available)('a real prometheus scraping the metrics listener', () => {
  let server: MeteredServer
  let prometheus: Subprocess<'ignore', 'pipe', 'pipe'>
  let api: string
  let dir: string
  const killOnExit = () => prometheus?.kill('SIGKILL')

  beforeAll(async () => {
    server = await startMeteredServer()
    dir = mkdtempSync(join(tmpdir(), 'qa-api-prometheus-'))
    const target = new URL(server.metricsUrl).host
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${JSON.stringify(resolve('deploy/prometheus/alerts.yml'))}`,
        'scrape_configs:',
        '  - job_name: queue-api',
        '    static_configs:',
        `      - targets: [${JSON.stringify(target)}]`,
        '',
      ].join('\n'),
    )
    const port = await freePort()
    api = `http://127.0.0.1:${port}`
    prometheus = Bun.spawn(
      [prometheusBinary(), `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
    )
    process.on('exit', killOnExit)
    await until(async () => (await fetch(`${api}/-/ready`).catch(() => undefined))?.status === 200, 'prometheus to be ready')
  }, 40_000)
  afterAll(async () => {
    prometheus?.kill('SIGTERM')
    await prometheus?.exited
    process.off('exit', killOnExit)
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /** Polls `condition` until it holds (prometheus scrapes every second); fails after 30 s. */
  async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 30_000
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; prometheus said: ${await new Response(prometheus.stderr).text().catch(() => '')}`)
      await Bun.sleep(100)
    }
  }

  async function query(promql: string): Promise<number | undefined> {
    const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`)
    const body = (await response.json()) as { status: string; data: { result: { value: [number, string] }[] } }
    expect(body.status).toBe('success')
    const sample = body.data.result[0]
    return sample === undefined ? undefined : Number(sample.value[1])
  }

  test('PromQL gives the number of requests the test made, by operation and status', async () => {
    const { token } = server.seeded()
    const made = { ok: 0, unauthorised: 0 }
    for (let i = 0; i < 7; i++) {
      expect((await server.get('/v1/queues', token)).status).toBe(200)
      made.ok++
    }
    for (let i = 0; i < 3; i++) {
      expect((await server.get('/v1/tickets', 'svc_wrong')).status).toBe(401)
      made.unauthorised++
    }
    let seen: number | undefined
    await until(async () => (seen = await query('queue_api_requests_total{job="queue-api",operation="queues",status="200"}')) === made.ok, `the queues count to reach ${made.ok} (last seen ${seen})`)
    expect(await query('sum(queue_api_requests_total{job="queue-api",status="401"})')).toBe(made.unauthorised)
    expect(await query('queue_api_request_duration_seconds_count{job="queue-api",operation="queues"}')).toBe(made.ok)
    expect(await query('queue_api_build_info{job="queue-api"}')).toBe(1)
  }, 40_000)

  test('prometheus loaded the shipped rules and evaluates them without errors', async () => {
    const body = (await (await fetch(`${api}/api/v1/rules`)).json()) as { data: { groups: { name: string; rules: { name: string; health: string }[] }[] } }
    const rules = body.data.groups.flatMap((group) => group.rules)
    expect(rules.map((rule) => rule.name)).toContain('QueueApiLimitsFailingClosed')
    await until(async () => {
      const now = (await (await fetch(`${api}/api/v1/rules`)).json()) as typeof body
      return now.data.groups.flatMap((group) => group.rules).every((rule) => rule.health === 'ok')
    }, 'every rule to be evaluated healthy')
  }, 40_000)
})
