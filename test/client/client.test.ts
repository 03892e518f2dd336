import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { Client, DemoQuotaExceededError, InvalidRequestError, RateLimitedError, UnauthorizedError, ApiNotEnabledError, DataUnavailableError, NetworkError, TimeoutError, type RetryEvent, type Ticket } from '../../src/client/index.ts'
import { TICKET_FIELDS } from '../../src/contract/vocabulary.ts'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { parseCsv, ticketsInFile } from '../support/fixtures.ts'
import { firstChunkThenSilence, startFlakyProxy } from '../support/flaky-proxy.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { renameSync } from 'node:fs'

const DAY = 86_400_000
const FROM = Date.parse('2025-01-01T00:00:00.000Z')
const TO = FROM + 400 * DAY
/** The instants where a 400-day range is cut into 90-day windows: tickets sit exactly on them. */
const SEAMS = [1, 2, 3, 4].map((i) => FROM + i * 90 * DAY)

let server: TestServer
let token: string
let orgId: string

/** The tenant's rows of [from, to), read straight from its file: what a client walk must return. */
function rowsInFile(from: number, to: number): Ticket[] {
  const db = new Database(tenantFilePath(server.dataDir, orgId), { readonly: true })
  try {
    return ticketsInFile(db, new Date(from).toISOString(), new Date(to).toISOString())
  } finally {
    db.close()
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 100_000 })
  // 410 days, one ticket every 3 hours, plus tickets exactly on each window seam and 1 ms before it.
  const created = server.seeded({
    bulk: { count: 410 * 8, start: new Date(FROM - 5 * DAY).toISOString(), everySeconds: 3 * 3600 + 7 },
    tickets: SEAMS.flatMap((seam, i) => [
      { id: `seam-${i}-at`, number: 1, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: new Date(seam).toISOString() },
      { id: `seam-${i}-before`, number: 2, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: new Date(seam - 1).toISOString() },
    ]),
  })
  token = created.token
  orgId = created.org.id
})
afterAll(() => server.close())

describe('Client: reading', () => {
  test('queues() returns the locations with their queues', async () => {
    const client = new Client({ baseUrl: server.base, token })
    const { locations } = await client.queues()
    expect(locations.map((l) => l.id)).toEqual(['loc_a', 'loc_a2', 'loc_b', 'loc_empty'])
  })

  test('tickets() follows every cursor: the same rows as the file, in order', async () => {
    const client = new Client({ baseUrl: server.base, token })
    const from = FROM + 10 * DAY
    const to = from + 20 * DAY
    const rows = await collect(client.tickets({ from: new Date(from), to: new Date(to).toISOString(), limit: 7 }))
    expect(rows.length).toBeGreaterThan(100)
    expect(rows).toEqual(rowsInFile(from, to))
    for (const row of rows) expect(Object.keys(row)).toEqual([...TICKET_FIELDS])
  })

  test('a 400-day range is split into 90-day windows: no gap, no duplicate at the seams', async () => {
    const client = new Client({ baseUrl: server.base, token })
    const windows = new Set<string>()
    const rows: Ticket[] = []
    for await (const page of client.pages({ from: FROM, to: TO, limit: 500 })) {
      windows.add(`${page.window.from}/${page.window.to}`)
      rows.push(...page.items)
    }
    expect([...windows]).toHaveLength(5)
    expect(rows).toEqual(rowsInFile(FROM, TO))
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length)
    for (let i = 0; i < SEAMS.length; i++) {
      expect(rows.filter((r) => r.id === `seam-${i}-at` || r.id === `seam-${i}-before`)).toHaveLength(2)
    }
  })

  test('filters are sent as repeated parameters', async () => {
    const client = new Client({ baseUrl: server.base, token })
    const rows = await collect(client.tickets({ from: FROM, to: TO, queueId: ['q_zh'], status: 'WAITING' }))
    expect(rows.map((r) => r.id).sort()).toEqual(SEAMS.flatMap((_, i) => [`seam-${i}-at`, `seam-${i}-before`]).sort())
  })

  test('exportCsv() over 400 days: one header row, the same rows as the pages, the range in the file name', async () => {
    const client = new Client({ baseUrl: server.base, token })
    const csv = await client.exportCsv({ from: FROM, to: TO })
    expect(csv.fileName).toBe('tickets_20250101T000000Z_20260205T000000Z.csv')
    expect(csv.demo).toBe(false)
    const text = await new Response(csv.stream).text()
    expect(text.split('\r\n').filter((line) => line.startsWith('id,number,'))).toHaveLength(1)
    const parsed = await parseCsv(text)
    expect(parsed.map((row) => row.id)).toEqual(rowsInFile(FROM, TO).map((row) => row.id))
  })

  test('exportCsv() of one window keeps the server\'s file name', async () => {
    const client = new Client({ baseUrl: server.base, token })
    const csv = await client.exportCsv({ from: '2025-02-01', to: '2025-02-02T00:00:00Z' })
    expect(csv.fileName).toBe('tickets_20250201T000000Z_20250202T000000Z.csv')
    expect((await parseCsv(await new Response(csv.stream).text())).length).toBe(rowsInFile(Date.parse('2025-02-01'), Date.parse('2025-02-02')).length)
  })
})

describe('Client: changes', () => {
  test('changes() returns the tickets changed after a token, and the token of its first response for next time', async () => {
    const client = new Client({ baseUrl: server.base, token })
    const query = { from: FROM, to: TO }
    let token0: string | null = null
    for await (const page of client.pages({ ...query, limit: 500 })) token0 ??= page.changesToken
    expect(token0).toMatch(/^[\w-]+\.[\w-]+$/)

    const db = openTenant(server.dataDir, orgId)
    db.query("UPDATE tickets SET status = 'CANCELED', cancelled_at = '2025-06-01T10:00:00.000Z' WHERE id IN ('seam-1-at', 'seam-3-before')").run()
    db.close()

    const changes = client.changes(query, token0!)
    expect(changes.nextToken).toBeNull() // not known before the first page was read
    const changed = await collect(changes.tickets)
    expect(changed.map((t) => [t.id, t.status])).toEqual([['seam-1-at', 'CANCELED'], ['seam-3-before', 'CANCELED']])
    expect(changes.nextToken).not.toBe(token0)
    expect(await collect(client.changes(query, changes.nextToken!).tickets)).toEqual([])
    const csv = await client.exportCsv({ ...query, changedAfter: token0! })
    expect((await parseCsv(await new Response(csv.stream).text())).map((row) => row.id)).toEqual(['seam-1-at', 'seam-3-before'])
  })
})

describe('Client: errors and retries', () => {
  test('a bad range is refused before any request; a 400 is thrown as InvalidRequestError with its param, never retried', async () => {
    const proxy = await startFlakyProxy({ host: '127.0.0.1', port: Number(new URL(server.base).port) })
    try {
      const client = new Client({ baseUrl: proxy.base, token, sleep: async () => {} })
      expect(() => client.pages({ from: '2025-03-01T00:00:00', to: '2025-03-02' }).next()).toThrow(RangeError)
      const error = await collect(client.tickets({ from: FROM, to: FROM + DAY, limit: 501 })).catch((e) => e)
      expect(error).toBeInstanceOf(InvalidRequestError)
      expect(error).toMatchObject({ status: 400, code: 'invalid_request', param: 'limit' })
      expect(error.requestId).toBeString()
      expect(proxy.state.forwarded).toBe(1)
    } finally {
      await proxy.close()
    }
  })

  test('401 and 402 are thrown at once, typed', async () => {
    const sleeps: number[] = []
    const unknown = new Client({ baseUrl: server.base, token: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, sleep: async (ms) => void sleeps.push(ms) })
    expect(await unknown.queues().catch((e) => e)).toBeInstanceOf(UnauthorizedError)
    const disabled = new Client({ baseUrl: server.base, token: server.organisation({ apiEnabled: false }).token, sleep: async (ms) => void sleeps.push(ms) })
    expect(await disabled.queues().catch((e) => e)).toBeInstanceOf(ApiNotEnabledError)
    expect(sleeps).toEqual([])
  })

  test('dropped connections are retried with backoff, then succeed; too many give a NetworkError', async () => {
    const proxy = await startFlakyProxy({ host: '127.0.0.1', port: Number(new URL(server.base).port) })
    try {
      const events: RetryEvent[] = []
      const client = new Client({ baseUrl: proxy.base, token, sleep: async () => {}, onRetry: (e) => events.push(e), maxAttempts: 3 })
      proxy.dropNext(2)
      expect((await client.queues()).locations.length).toBe(4)
      expect(events.map((e) => e.reason)).toEqual(['network_error', 'network_error'])
      expect(events[1]!.waitSeconds).toBeGreaterThan(events[0]!.waitSeconds * 0.99 / 2) // doubling, with jitter
      proxy.dropNext(3)
      expect(await client.queues().catch((e) => e)).toBeInstanceOf(NetworkError)
    } finally {
      await proxy.close()
    }
  })

  test('a 5xx is retried and succeeds when the server recovers', async () => {
    const broken = server.organisation()
    const file = tenantFilePath(server.dataDir, broken.org.id)
    renameSync(file, `${file}.away`) // the tenant file is missing: 503 data_unavailable
    const events: RetryEvent[] = []
    const client = new Client({
      baseUrl: server.base,
      token: broken.token,
      onRetry: (e) => events.push(e),
      sleep: async () => {
        renameSync(`${file}.away`, file) // the operator restores the file while the client waits
      },
    })
    expect((await client.queues()).locations).toEqual([])
    expect(events).toMatchObject([{ reason: 'server_error', status: 503, attempt: 1, path: '/v1/queues' }])
    renameSync(file, `${file}.away`)
    const giveUp = new Client({ baseUrl: server.base, token: broken.token, sleep: async () => {}, maxAttempts: 2 })
    expect(await giveUp.queues().catch((e) => e)).toBeInstanceOf(DataUnavailableError)
    renameSync(`${file}.away`, file)
  })
})

describe('Client: limits', () => {
  let limited: TestServer
  let paid: string
  let demo: string
  beforeAll(async () => {
    limited = await startServer({ rateLimitPerMinute: 3, demoDailyQuota: 2 })
    paid = limited.seeded().token
    demo = limited.seeded({ plan: 'demo' }).token
  })
  afterAll(() => limited.close())

  test('rate_limited: waits Retry-After (a fake clock here) and goes on to the end', async () => {
    const events: RetryEvent[] = []
    const client = new Client({ baseUrl: limited.base, token: paid, onRetry: (e) => events.push(e), sleep: async (ms) => limited.clock.advance(ms) })
    const rows = await collect(client.tickets({ from: '2026-03-01', to: '2026-03-05', limit: 1 }))
    expect(rows.map((r) => r.id)).toEqual(['t-001', 't-002', 't-003', 't-004', 't-005', 't-006'])
    expect(events.length).toBeGreaterThan(0)
    for (const event of events) expect(event).toMatchObject({ reason: 'rate_limited', status: 429, path: '/v1/tickets' })
    expect(events[0]!.waitSeconds).toBeGreaterThanOrEqual(1)
  })

  test('rate_limited past maxRetryWaitSeconds: RateLimitedError with retryAfterSeconds', async () => {
    limited.clock.advance(120_000)
    const client = new Client({ baseUrl: limited.base, token: paid, maxRetryWaitSeconds: 5, sleep: async (ms) => limited.clock.advance(ms) })
    const error = await collect(client.tickets({ from: '2026-03-01', to: '2026-03-05', limit: 1 })).catch((e) => e)
    expect(error).toBeInstanceOf(RateLimitedError)
    expect(error.retryAfterSeconds).toBeGreaterThan(5)
  })

  test('an AbortSignal ends a wait for the minute window at once (AbortError), not when the wait is over', async () => {
    limited.clock.advance(120_000)
    const controller = new AbortController()
    // A wait that would last far longer than the test: only the abort can end it.
    const client = new Client({ baseUrl: limited.base, token: paid, sleep: () => new Promise(() => {}), onRetry: () => setTimeout(() => controller.abort(), 20) })
    const walk = collect(client.tickets({ from: '2026-03-01', to: '2026-03-05', limit: 1 }, { signal: controller.signal })).catch((e) => e)
    const error = await Promise.race([walk, Bun.sleep(2000).then(() => 'still waiting')])
    expect(error).toBeInstanceOf(DOMException)
    expect((error as DOMException).name).toBe('AbortError')
  })

  test('demo_quota_exceeded is thrown at once with resetAt, never slept through', async () => {
    limited.clock.advance(120_000)
    const sleeps: number[] = []
    // Even a client willing to wait for ever does not wait for the next day.
    const client = new Client({ baseUrl: limited.base, token: demo, maxRetryWaitSeconds: 1e9, sleep: async (ms) => void sleeps.push(ms) })
    await client.queues()
    await client.queues()
    const error = await client.queues().catch((e) => e)
    expect(error).toBeInstanceOf(DemoQuotaExceededError)
    expect(error.limit).toBe(2)
    expect(error.resetAt).toBe('2026-03-11T00:00:00.000Z')
    expect(sleeps).toEqual([])
    const csv = await new Client({ baseUrl: limited.base, token: demo }).exportCsv({ from: '2026-03-01', to: '2026-03-05' }).catch((e) => e)
    expect(csv).toBeInstanceOf(DemoQuotaExceededError)
  })
})

describe('Client: nothing waits for ever', () => {
  /**
   * A front for the real server that stalls on purpose: `/v1/queues` never answers, and an
   * export answers its headers and first chunk, then sends nothing more (a server stopped
   * mid-body, as SIGSTOP leaves it).
   */
  function startStallingFront() {
    return Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const url = new URL(request.url)
        if (url.pathname === '/v1/queues') return new Promise<Response>(() => undefined)
        const upstream = await fetch(`${server.base}${url.pathname}${url.search}`, { headers: request.headers })
        const body = firstChunkThenSilence(upstream.body!)
        // fetch has decoded the body: its encoding and length no longer describe it.
        const headers = new Headers(upstream.headers)
        headers.delete('content-encoding')
        headers.delete('content-length')
        return new Response(body, { status: upstream.status, headers })
      },
    })
  }

  test('no headers within timeoutMs: TimeoutError, not retried', async () => {
    const front = startStallingFront()
    try {
      const retries: RetryEvent[] = []
      const client = new Client({ baseUrl: `http://127.0.0.1:${front.port}`, token, timeoutMs: 300, onRetry: (event) => retries.push(event) })
      const started = Date.now()
      const error = await client.queues().catch((e) => e)
      expect(error).toBeInstanceOf(TimeoutError)
      expect(error.message).toBe('no answer from /v1/queues for 0.3 s (the server or the network stalled)')
      expect(Date.now() - started).toBeLessThan(3000)
      expect(retries).toEqual([])
    } finally {
      front.stop(true)
    }
  })

  test('a body that stops half-way: reading it fails with TimeoutError after timeoutMs', async () => {
    const front = startStallingFront()
    try {
      const client = new Client({ baseUrl: `http://127.0.0.1:${front.port}`, token, timeoutMs: 300 })
      const csv = await client.exportCsv({ from: FROM, to: FROM + 80 * DAY })
      const error = await new Response(csv.stream).text().catch((e) => e)
      expect(error).toBeInstanceOf(TimeoutError)
    } finally {
      front.stop(true)
    }
  })

  test('a body that comes slowly, read slowly, is not a stalled server: only each wait for the server is timed', async () => {
    // The real export, sent in 10 pieces 60 ms apart: 600 ms in all, no gap near timeoutMs.
    const drip = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const url = new URL(request.url)
        const upstream = await fetch(`${server.base}${url.pathname}${url.search}`, { headers: request.headers })
        const bytes = new Uint8Array(await upstream.arrayBuffer())
        const size = Math.ceil(bytes.length / 10)
        let at = 0
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (at >= bytes.length) return controller.close()
            if (at > 0) await Bun.sleep(60)
            controller.enqueue(bytes.slice(at, (at += size)))
          },
        })
        const headers = new Headers(upstream.headers)
        headers.delete('content-encoding')
        headers.delete('content-length')
        return new Response(body, { status: upstream.status, headers })
      },
    })
    try {
      const client = new Client({ baseUrl: `http://127.0.0.1:${drip.port}`, token, timeoutMs: 250 })
      const csv = await client.exportCsv({ from: FROM, to: FROM + 80 * DAY })
      // And the reader takes longer than timeoutMs over each piece (a warehouse busy with the last one).
      const reader = csv.stream.getReader()
      const chunks: Uint8Array[] = []
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        chunks.push(value)
        await Bun.sleep(300)
      }
      const rows = Buffer.concat(chunks).toString().trimEnd().split('\n').length - 1
      expect(rows).toBe(rowsInFile(FROM, FROM + 80 * DAY).length)
    } finally {
      drip.stop(true)
    }
  })

  test('an AbortSignal ends queues(), pages(), tickets() and the export', async () => {
    const aborted = AbortSignal.abort(new Error('stopped by the caller'))
    const client = new Client({ baseUrl: server.base, token })
    const query = { from: FROM, to: FROM + 80 * DAY, limit: 10 }
    await expect(client.queues({ signal: aborted })).rejects.toThrow('stopped by the caller')
    await expect(client.exportCsv(query, { signal: aborted })).rejects.toThrow('stopped by the caller')
    await expect(collect(client.tickets(query, { signal: aborted }))).rejects.toThrow('stopped by the caller')
    // Mid-iteration: the page after the abort is never asked for.
    const controller = new AbortController()
    let pages = 0
    const walk = (async () => {
      for await (const _page of client.pages(query, { signal: controller.signal })) if (++pages === 2) controller.abort(new Error('enough'))
    })()
    await expect(walk).rejects.toThrow('enough')
    expect(pages).toBe(2)
  })

  test('timeoutMs must be positive', () => {
    expect(() => new Client({ baseUrl: server.base, token, timeoutMs: 0 })).toThrow('timeoutMs must be a positive number')
  })
})
