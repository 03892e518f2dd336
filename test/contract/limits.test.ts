import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, tempDataDir, type TestServer } from '../support/harness.ts'
import { startServerProcess } from '../support/server-process.ts'
import { ManualClock } from '../../src/clock.ts'

const PAGE = '/v1/tickets?from=2026-03-01&to=2026-03-02'

function limitHeaders(response: Response) {
  return {
    limit: response.headers.get('x-ratelimit-limit'),
    remaining: response.headers.get('x-ratelimit-remaining'),
    reset: response.headers.get('x-ratelimit-reset'),
    retryAfter: response.headers.get('retry-after'),
    policy: response.headers.get('ratelimit-policy'),
    current: response.headers.get('ratelimit'),
  }
}

async function drain(response: Response) {
  await response.arrayBuffer()
  return response
}

describe('per-token minute window', () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  test('60 pass, the 61st is 429 with Retry-After; one more passes when the oldest leaves', async () => {
    const { token } = server.organisation()
    const start = server.clock.now()
    for (let i = 0; i < 60; i++) {
      const response = await drain(await server.get(PAGE, token))
      expect(response.status).toBe(200)
      expect(limitHeaders(response)).toMatchObject({ limit: '60', remaining: String(59 - i) })
      server.clock.advance(500) // 60 requests over 30 s
    }
    const refused = await server.get(PAGE, token)
    expect(refused.status).toBe(429)
    const body = (await refused.json()) as Record<string, unknown>
    // The oldest request (at start) leaves the window at start + 60 s; now is start + 30 s.
    expect(body).toMatchObject({ error: 'rate_limited', retryAfter: 30 })
    // Fully restored only when the newest (at start + 29.5 s) leaves: 59.5 s, rounded up.
    expect(limitHeaders(refused)).toMatchObject({ remaining: '0', retryAfter: '30', reset: '60', policy: '"minute";q=60;w=60', current: '"minute";r=0;t=60' })

    server.clock.set(start + 60_000 - 1)
    expect((await drain(await server.get(PAGE, token))).status).toBe(429)
    server.clock.set(start + 60_000)
    const again = await drain(await server.get(PAGE, token))
    expect(again.status).toBe(200)
    expect(limitHeaders(again).remaining).toBe('0')
    expect((await drain(await server.get(PAGE, token))).status).toBe(429)
  })

  test('120 requests across a minute boundary: never more than 60 in any 60 s', async () => {
    const { token } = server.organisation()
    server.clock.set(Date.parse('2026-03-10T12:00:59.000Z'))
    const accepted: number[] = []
    for (let i = 0; i < 120; i++) {
      const response = await drain(await server.get(PAGE, token))
      if (response.status === 200) accepted.push(server.clock.now())
      server.clock.advance(16)
    }
    expect(accepted).toHaveLength(60)
    for (const t of accepted) expect(accepted.filter((u) => u >= t && u < t + 60_000).length).toBeLessThanOrEqual(60)
  })

  test('limits are per token: another token of the same or another organisation is unaffected', async () => {
    const { org, token } = server.organisation()
    const sibling = server.token(org.id, 'sibling').token
    const stranger = server.organisation().token
    for (let i = 0; i < 60; i++) await drain(await server.get(PAGE, token))
    expect((await drain(await server.get(PAGE, token))).status).toBe(429)
    expect(limitHeaders(await drain(await server.get(PAGE, sibling)))).toMatchObject({ remaining: '59' })
    expect(limitHeaders(await drain(await server.get(PAGE, stranger)))).toMatchObject({ remaining: '59' })
  })

  test('headers on 200, 400, 429 and 503; a 429 consumes nothing; 401 counts nowhere', async () => {
    const { org, token } = server.organisation()
    const ok = await drain(await server.get(PAGE, token))
    expect(limitHeaders(ok)).toMatchObject({ remaining: '59', reset: '60', retryAfter: null })
    const bad = await drain(await server.get('/v1/tickets?from=nope&to=2026-03-02', token))
    expect(bad.status).toBe(400)
    expect(limitHeaders(bad)).toMatchObject({ remaining: '58' })
    const csv = await drain(await server.get('/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-02', token))
    expect(limitHeaders(csv)).toMatchObject({ remaining: '57' })
    for (let i = 0; i < 57; i++) await drain(await server.get(PAGE, token))
    for (let i = 0; i < 3; i++) expect((await drain(await server.get(PAGE, token))).status).toBe(429)
    server.clock.advance(60_000)
    const after = await drain(await server.get(PAGE, token))
    expect(after.status).toBe(200)
    expect(limitHeaders(after).remaining).toBe('59') // the three 429s consumed nothing
    const { rmSync } = await import('node:fs')
    const { tenantFilePath } = await import('../../src/tenant/paths.ts')
    rmSync(tenantFilePath(server.dataDir, org.id))
    const unavailable = await drain(await server.get(PAGE, token))
    expect(unavailable.status).toBe(503)
    expect(limitHeaders(unavailable).remaining).toBe('58')
  })
})

describe('demo organisations: daily quota', () => {
  test('a 402 of a demo organisation shows the window and the day, counting neither', async () => {
    const server = await startServer()
    const { token } = server.organisation({ plan: 'demo', apiEnabled: false })
    for (let i = 0; i < 2; i++) {
      const response = await server.get('/v1/queues', token)
      expect(response.status).toBe(402)
      expect(response.headers.get('ratelimit-policy')).toBe('"minute";q=60;w=60, "day";q=50;w=86400')
      expect(response.headers.get('ratelimit')).toBe('"minute";r=60;t=0, "day";r=50;t=43200')
    }
    await server.close()
  })

  test('the 51st request of a UTC day is 429 demo_quota_exceeded; resetAt and Retry-After agree', async () => {
    const clock = new ManualClock(Date.parse('2026-03-10T23:00:00.000Z'))
    const server = await startServer({}, { clock })
    const { token } = server.organisation({ plan: 'demo' })
    for (let i = 0; i < 50; i++) {
      const response = await drain(await server.get(PAGE, token))
      expect(response.status).toBe(200)
      if (i === 0) {
        expect(limitHeaders(response).policy).toBe('"minute";q=60;w=60, "day";q=50;w=86400')
        expect(limitHeaders(response).current).toBe('"minute";r=59;t=60, "day";r=49;t=3600')
      }
      clock.advance(1500) // stay under the minute window: 40 per minute
    }
    const refused = await server.get(PAGE, token)
    expect(refused.status).toBe(429)
    const body = (await refused.json()) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['error', 'limit', 'message', 'requestId', 'resetAt'])
    expect(body).toMatchObject({ error: 'demo_quota_exceeded', limit: 50, resetAt: '2026-03-11T00:00:00.000Z' })
    const secondsToReset = Math.ceil((Date.parse('2026-03-11T00:00:00.000Z') - clock.now()) / 1000)
    expect(limitHeaders(refused).retryAfter).toBe(String(secondsToReset))
    // X-RateLimit-* still describe the minute window.
    expect(Number(limitHeaders(refused).remaining)).toBeGreaterThan(0)

    clock.set(Date.parse('2026-03-11T00:00:00.000Z'))
    const nextDay = await drain(await server.get(PAGE, token))
    expect(nextDay.status).toBe(200)
    expect(limitHeaders(nextDay).current).toContain('"day";r=49;t=86400')
    await server.close()
  })

  test('the count survives a restart on the same data directory', async () => {
    const clock = new ManualClock(Date.parse('2026-03-10T10:00:00.000Z'))
    const first = await startServer({}, { clock })
    const { token } = first.organisation({ plan: 'demo' })
    for (let i = 0; i < 30; i++) {
      await drain(await first.get(PAGE, token))
      clock.advance(2000)
    }
    const dataDir = first.dataDir
    await first.app.close(0)
    const second = await startServer({}, { clock, dataDir })
    const response = await drain(await second.get(PAGE, token))
    expect(limitHeaders(response).current).toContain('"day";r=19;')
    await second.app.close(0)
    const { rmSync } = await import('node:fs')
    rmSync(dataDir, { recursive: true, force: true })
  })

  test('two server processes on one data directory never let more than 50 through', async () => {
    const temp = tempDataDir()
    const setup = await startServer({}, { dataDir: temp.dir })
    const { token } = setup.organisation({ plan: 'demo' })
    await setup.app.close(0)
    const env = { DATA_DIR: temp.dir, RATE_LIMIT_PER_MINUTE: '1000' }
    const [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)])
    try {
      const requests = Array.from({ length: 80 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).base}${PAGE}`, { headers: { Authorization: `Bearer ${token}` } }).then(drain),
      )
      const statuses = (await Promise.all(requests)).map((r) => r.status)
      expect(statuses.filter((s) => s === 200)).toHaveLength(50)
      expect(statuses.filter((s) => s === 429)).toHaveLength(30)
    } finally {
      await Promise.all([a.stop(), b.stop()])
      temp.cleanup()
    }
  })

  test('under the minute limit but over the day quota, and the reverse: the right 429 each time', async () => {
    const clock = new ManualClock(Date.parse('2026-03-10T10:00:00.000Z'))
    const server = await startServer({ rateLimitPerMinute: 5, demoDailyQuota: 8 }, { clock })
    const { org, token } = server.organisation({ plan: 'demo' })
    for (let i = 0; i < 5; i++) expect((await drain(await server.get(PAGE, token))).status).toBe(200)
    const minute = await server.get(PAGE, token)
    expect(((await minute.json()) as { error: string }).error).toBe('rate_limited') // over the minute, under the day
    clock.advance(60_000)
    for (let i = 0; i < 3; i++) expect((await drain(await server.get(PAGE, token))).status).toBe(200)
    const day = await server.get(PAGE, token)
    expect(((await day.json()) as { error: string }).error).toBe('demo_quota_exceeded') // under the minute, over the day
    expect(limitHeaders(day).remaining).toBe('2')

    // Switching to paid lifts the quota at once.
    server.app.store.updateOrganisation(org.id, { plan: 'paid' })
    const paid = await drain(await server.get(PAGE, token))
    expect(paid.status).toBe(200)
    expect(limitHeaders(paid).policy).toBe('"minute";q=5;w=60')
    await server.close()
  })
})
