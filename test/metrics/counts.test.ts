import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { createLimits } from '../../src/limits/index.ts'
import type { DemoQuota, RateLimiter } from '../../src/limits/types.ts'
import { configWith } from '../../src/config/config.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { requestCounts, startMeteredServer, valueOf, type MeteredServer } from './support.ts'
import { RawHttpClient, eventually, rawExchange } from '../support/raw-http.ts'

/**
 * The metrics count exactly what the service answered (docs/operations.md#metrics): a test makes
 * known requests of every kind, one scrape of the metrics listener must show each of them.
 */
const RATE_LIMIT = 6
const DEMO_QUOTA = 3
const RANGE = 'from=2026-03-01&to=2026-03-05'
const EXPORT_RANGE = 'from=2026-01-01&to=2026-03-01'

let server: MeteredServer
const limitsDown = { on: false }

/** The real embedded limits, whose calls fail while `limitsDown.on` is set (an unreachable store). */
function breakable<T extends object>(target: T): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver)
      if (typeof value !== 'function' || key === 'close') return value
      return (...args: unknown[]) => (limitsDown.on ? Promise.reject(new Error('engine unreachable')) : value.apply(object, args))
    },
  })
}

beforeAll(async () => {
  server = await startMeteredServer(
    { rateLimitPerMinute: RATE_LIMIT, demoDailyQuota: DEMO_QUOTA },
    {
      limits: (store, clock) => {
        const limits = createLimits(configWith({ dataDir: store.dataDir, rateLimitPerMinute: RATE_LIMIT, demoDailyQuota: DEMO_QUOTA }), { store, clock })
        return { ...limits, limiter: breakable<RateLimiter>(limits.limiter), quota: breakable<DemoQuota>(limits.quota) }
      },
    },
  )
})
afterAll(() => server.close())

describe('every answered request is counted by operation and status', () => {
  test('200, 400, 401, 402, 404, 405, 429 of both reasons and 503 data_unavailable: each exactly as often as answered', async () => {
    const paid = server.seeded().token
    const demo = server.seeded({ plan: 'demo' }).token
    const disabled = server.organisation({ apiEnabled: false }).token
    const gone = server.seeded()
    rmSync(tenantFilePath(server.dataDir, gone.org.id))

    const statuses: number[] = []
    const get = async (path: string, token?: string, init: RequestInit = {}) => {
      const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {}
      const response = await fetch(server.base + path, { ...init, headers })
      await response.arrayBuffer()
      statuses.push(response.status)
      return response.status
    }

    // The paid token: 6 counted requests fill its window, the 7th is refused.
    expect(await get('/v1/queues', paid)).toBe(200)
    expect(await get('/v1/queues', paid)).toBe(200)
    expect(await get(`/v1/tickets?${RANGE}`, paid)).toBe(200)
    expect(await get('/v1/tickets?from=2026-03-05&to=2026-03-01', paid)).toBe(400)
    expect(await get(`/v1/exports/tickets.csv?${RANGE}&limit=5`, paid)).toBe(400)
    expect(await get('/v1/queues', paid)).toBe(200)
    expect(await get('/v1/queues', paid)).toBe(429)
    expect(await get('/v1/tickets', paid)).toBe(429)
    // The demo organisation: its quota of 3 is used up by the 4th.
    for (let i = 0; i < DEMO_QUOTA; i++) expect(await get('/v1/queues', demo)).toBe(200)
    expect(await get('/v1/queues', demo)).toBe(429)
    // Answered before any route runs.
    expect(await get('/v1/queues')).toBe(401)
    expect(await get('/v1/queues', 'svc_not_a_token')).toBe(401)
    expect(await get(`/v1/exports/tickets.csv?${RANGE}`)).toBe(401)
    expect(await get('/v1/tickets', disabled)).toBe(402)
    expect(await get('/v1/queues', gone.token)).toBe(503)
    expect(await get('/v1/queues', paid, { method: 'POST' })).toBe(405)
    expect(await get('/nowhere')).toBe(404)
    expect(await get('/metrics')).toBe(404) // never on the API's port
    expect(await get('/healthz')).toBe(200)

    const samples = await server.scrape()
    expect(requestCounts(samples)).toEqual({
      'queues 200': 6,
      'tickets 200': 1,
      'tickets 400': 1,
      'export 400': 1,
      'queues 429': 2,
      'tickets 429': 1,
      'queues 401': 2,
      'export 401': 1,
      'tickets 402': 1,
      'queues 503': 1,
      'queues 405': 1,
      'other 404': 2,
      'other 200': 1,
    })
    const counted = Object.values(requestCounts(samples)).reduce((sum, count) => sum + count, 0)
    expect(counted).toBe(statuses.length)
    expect(valueOf(samples, 'queue_api_limit_rejections_total', { reason: 'rate_limited' })).toBe(2)
    expect(valueOf(samples, 'queue_api_limit_rejections_total', { reason: 'demo_quota_exceeded' })).toBe(1)
    expect(valueOf(samples, 'queue_api_tenant_unavailable_total')).toBe(1)
    // One histogram observation per answered request, per operation.
    for (const operation of ['queues', 'tickets', 'export', 'other']) {
      const answered = Object.entries(requestCounts(samples))
        .filter(([key]) => key.startsWith(`${operation} `))
        .reduce((sum, [, count]) => sum + count, 0)
      expect(valueOf(samples, 'queue_api_request_duration_seconds_count', { operation })).toBe(answered)
      expect(valueOf(samples, 'queue_api_request_duration_seconds_bucket', { operation, le: '+Inf' })).toBe(answered)
    }
  })
})

describe('exports', () => {
  test('rows and bytes of an export, its duration to the last byte, nothing left in flight', async () => {
    const { token } = server.seeded({ bulk: { count: 3000, everySeconds: 60 } })
    const before = await server.scrape()
    const response = await fetch(`${server.base}/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-01`, {
      headers: { Authorization: `Bearer ${token}`, 'Accept-Encoding': 'identity' },
    })
    expect(response.status).toBe(200)
    const csv = await response.text()
    const rows = csv.trimEnd().split('\n').length - 1
    expect(rows).toBeGreaterThan(1000)

    const after = await server.scrape()
    const grew = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels)
    expect(grew('queue_api_export_rows_total')).toBe(rows)
    expect(grew('queue_api_export_bytes_total')).toBe(Buffer.byteLength(csv))
    expect(grew('queue_api_requests_total', { operation: 'export', status: '200' })).toBe(1)
    expect(grew('queue_api_request_duration_seconds_count', { operation: 'export' })).toBe(1)
    expect(valueOf(after, 'queue_api_exports_in_flight')).toBe(0)
    // Its own connection, opened and closed again; the shared one stays open.
    expect(grew('queue_api_tenant_opens_total')).toBe(2)
    expect(valueOf(after, 'queue_api_tenant_pool_open')).toBe(server.app.pool.stats().open)
  })

  test('an export streaming now is in flight, and counted when its stream ends', async () => {
    const { token } = server.seeded({ bulk: { count: 20_000, everySeconds: 30 } })
    const response = await fetch(`${server.base}/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-01`, {
      headers: { Authorization: `Bearer ${token}`, 'Accept-Encoding': 'identity' },
    })
    const reader = response.body!.getReader()
    await reader.read()
    const during = await server.scrape()
    expect(valueOf(during, 'queue_api_exports_in_flight')).toBe(1)
    const countedDuring = valueOf(during, 'queue_api_requests_total', { operation: 'export', status: '200' })
    while (!(await reader.read()).done) {}
    const after = await server.scrape()
    expect(valueOf(after, 'queue_api_exports_in_flight')).toBe(0)
    expect(valueOf(after, 'queue_api_requests_total', { operation: 'export', status: '200' })).toBe(countedDuring + 1)
  })
})

/** Polls an asynchronous condition (a scrape) until it holds, for at most 10 s. */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

describe('the stall gauge', () => {
  test('a running export whose rows stopped shows its wait, whatever another export writes; none running: 0', async () => {
    const { token } = server.seeded({ bulk: { count: 50_000, everySeconds: 30 } })
    const stall = async () => valueOf(await server.scrape(), 'queue_api_export_stall_seconds')
    expect(await stall()).toBe(0)
    // A reader that takes nothing: the export writes until the socket pushes back, then waits.
    const stuck = await RawHttpClient.get(server.base, `/v1/exports/tickets.csv?${EXPORT_RANGE}`, { Authorization: `Bearer ${token}` }, { paused: true })
    try {
      await until(async () => (await stall()) >= 1.5, 'the stuck export waiting 1.5 s')
      // Another export writing every row meanwhile hides nothing.
      const whole = await server.get(`/v1/exports/tickets.csv?${EXPORT_RANGE}`, token)
      expect((await whole.text()).length).toBeGreaterThan(1_000_000)
      expect(await stall()).toBeGreaterThanOrEqual(1.5)
    } finally {
      stuck.destroy()
    }
    await until(async () => (await stall()) === 0, 'no export running')
  })
})

describe('exports refused', () => {
  test('a token over EXPORTS_PER_TOKEN: counted as a limit rejection, too_many_exports', async () => {
    const { token } = server.seeded({ bulk: { count: 50_000, everySeconds: 30 } })
    const held = await Promise.all([1, 2].map(() => RawHttpClient.get(server.base, `/v1/exports/tickets.csv?${EXPORT_RANGE}`, { Authorization: `Bearer ${token}` }, { paused: true })))
    try {
      await eventually(() => server.app.pool.stats().leased === 2, 5000, 'two exports running')
      const before = valueOf(await server.scrape(), 'queue_api_limit_rejections_total', { reason: 'too_many_exports' })
      expect((await server.get(`/v1/exports/tickets.csv?${EXPORT_RANGE}`, token)).status).toBe(429)
      const after = await server.scrape()
      expect(valueOf(after, 'queue_api_limit_rejections_total', { reason: 'too_many_exports' })).toBe(before + 1)
    } finally {
      for (const client of held) client.destroy()
    }
  })
})

describe('the limits store', () => {
  test('down: the gauge is 0 and requests are counted 503; up again: 1', async () => {
    const { token } = server.seeded()
    expect(valueOf(await server.scrape(), 'queue_api_limits_backend_up')).toBe(1)
    limitsDown.on = true
    try {
      expect((await server.get('/v1/queues', token)).status).toBe(503)
      const down = await server.scrape()
      expect(valueOf(down, 'queue_api_limits_backend_up')).toBe(0)
      expect(valueOf(down, 'queue_api_requests_total', { operation: 'queues', status: '503' })).toBeGreaterThanOrEqual(1)
    } finally {
      limitsDown.on = false
    }
    expect((await server.get('/v1/queues', token)).status).toBe(200)
    expect(valueOf(await server.scrape(), 'queue_api_limits_backend_up')).toBe(1)
  })
})

describe('the metrics listener', () => {
  test('GET /metrics only: other paths 404, other methods 405; the text format with its content type', async () => {
    const response = await fetch(server.metricsUrl)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await response.text()
    expect(text).toContain('# TYPE queue_api_requests_total counter')
    // The commit of this checkout, as git names it: a build says which revision it came from.
    const revision = Bun.spawnSync(['git', 'describe', '--always', '--abbrev=12', '--dirty', '--exclude=*']).stdout.toString().trim()
    expect(revision).toMatch(/^[0-9a-f]{12}/)
    expect(text).toContain(`queue_api_build_info{version="0.1.0",revision="${revision}"} 1`)
    expect(text).toContain('process_cpu_seconds_total')
    expect((await fetch(server.metricsUrl.replace('/metrics', '/'))).status).toBe(404)
    expect((await fetch(server.metricsUrl.replace('/metrics', '/v1/queues'))).status).toBe(404)
    const post = await fetch(server.metricsUrl, { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET')
  })

  test('a scrape without a Host header (HTTP/1.0), or with a broken one, is answered, not a 500', async () => {
    const base = server.metricsUrl.replace('/metrics', '')
    for (const host of ['', 'Host: [::1\r\n']) {
      const answer = await rawExchange(base, `GET /metrics HTTP/1.0\r\n${host}\r\n`)
      expect(answer.status).toBe(200)
      expect(answer.body).toContain('# TYPE queue_api_requests_total counter')
    }
    expect((await rawExchange(base, 'GET /other HTTP/1.0\r\n\r\n')).status).toBe(404)
  })

  test('exact on its path as sent: a target that only resolves to /metrics is 404', async () => {
    const base = server.metricsUrl.replace('/metrics', '')
    for (const target of ['/metrics/../metrics', '/./metrics', '/x/../metrics', '//metrics', '/metrics/', '/%6Detrics']) {
      const answer = await rawExchange(base, `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
      expect({ target, status: answer.status }).toEqual({ target, status: 404 })
      expect(answer.body).not.toContain('# TYPE')
    }
    expect((await rawExchange(base, 'GET /metrics?x=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')).status).toBe(200)
  })

  test('no label holds a token, an organisation id or a value a caller chose', async () => {
    const { org, token } = server.seeded()
    await server.get('/v1/queues?chosen=by-caller', token)
    await server.get('/a-path-a-caller-chose', token)
    const text = await server.scrapeText()
    for (const secret of [token, org.id, 'by-caller', 'a-path-a-caller-chose', 'svc_']) expect(text).not.toContain(secret)
  })
})
