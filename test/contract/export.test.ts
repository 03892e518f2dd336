import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { readFileSync, truncateSync, statSync } from 'node:fs'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { standardTickets, writeBulkTickets, writeStructure, writeTickets } from '../support/fixtures.ts'
import { securitySuite } from '../support/security-suite.ts'
import { RawHttpClient, dechunk, eventually } from '../support/raw-http.ts'
import { startServerProcess } from '../support/server-process.ts'
import { childrenOf } from '../support/processes.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'

securitySuite('/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-05')

const HEADER = 'id,number,queueId,locationId,status,createdAt,calledAt,completedAt,cancelledAt,skippedAt,noShowAt,calledByDeviceSessionId'

describe('GET /v1/exports/tickets.csv', () => {
  let server: TestServer
  let token: string
  let demoToken: string
  let bigOrgToken: string

  beforeAll(async () => {
    server = await startServer({ rateLimitPerMinute: 100_000, demoDailyQuota: 100_000, exportStallTimeoutMs: 300 })
    const tickets = [
      ...standardTickets(),
      { id: 'needs "quotes", and commas', number: 10, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: '2026-03-04T12:00:00.000Z', calledByDeviceSessionId: 'line\r\nbreak' },
    ]
    token = server.seeded({ tickets }).token
    demoToken = server.seeded({ plan: 'demo', tickets }).token
    const big = server.seeded({ bulk: { count: 200_000 } })
    bigOrgToken = big.token
  })
  afterAll(() => server.close())

  test('byte-exact output: header, RFC 4180 quoting only where needed, CRLF, nulls empty, ties by id', async () => {
    const response = await server.get('/v1/exports/tickets.csv?from=2026-03-02&to=2026-03-05', token)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="tickets_20260302T000000Z_20260305T000000Z.csv"')
    expect(response.headers.get('x-service-demo')).toBeNull()
    expect(response.headers.get('x-ratelimit-limit')).toBe('100000')
    const bytes = new Uint8Array(await response.arrayBuffer())
    expect([...bytes.slice(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf])
    expect(new TextDecoder().decode(bytes)).toBe(
      [
        HEADER,
        't-001,1,q_pay,loc_a,COMPLETED,2026-03-02T09:00:00.000Z,2026-03-02T09:05:00.000Z,2026-03-02T09:10:00.000Z,,,,dev_1',
        't-002,2,q_pay,loc_a,CANCELED,2026-03-02T09:00:00.000Z,,,2026-03-02T09:03:00.000Z,,,',
        't-003,1,q_id,loc_a,NO_SHOW,2026-03-02T10:00:00.000Z,2026-03-02T10:20:00.000Z,,,,2026-03-02T10:25:00.000Z,dev_1',
        't-004,1,q_zh,loc_b,SKIPPED,2026-03-03T08:00:00.000Z,2026-03-03T08:01:00.000Z,,,2026-03-03T08:02:00.000Z,,',
        't-005,2,q_zh,loc_b,WAITING,2026-03-03T08:30:00.000Z,,,,,,',
        't-006,3,q_zh,loc_b,CALLED,2026-03-03T08:45:00.000Z,2026-03-03T08:50:00.000Z,,,,,dev_1',
        '"needs ""quotes"", and commas",10,q_pay,loc_a,COMPLETED,2026-03-04T12:00:00.000Z,,,,,,"line\r\nbreak"',
        '',
      ].join('\r\n'),
    )
  })

  test('demo organisations: demo- file name, X-Service-Demo: 1, a last column demo = 1', async () => {
    const response = await server.get('/v1/exports/tickets.csv?from=2026-03-03&to=2026-03-03T08:31:00Z', demoToken)
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="demo-tickets_20260303T000000Z_20260303T083100Z.csv"')
    expect(response.headers.get('x-service-demo')).toBe('1')
    expect(await response.text()).toBe(
      `${HEADER},demo\r\n` +
        't-004,1,q_zh,loc_b,SKIPPED,2026-03-03T08:00:00.000Z,2026-03-03T08:01:00.000Z,,,2026-03-03T08:02:00.000Z,,,1\r\n' +
        't-005,2,q_zh,loc_b,WAITING,2026-03-03T08:30:00.000Z,,,,,,,1\r\n',
    )
  })

  test('gzip when asked, streamed, the same bytes', async () => {
    const plain = await (await server.get('/v1/exports/tickets.csv?from=2026-01-01&to=2026-01-20', bigOrgToken)).text()
    const client = await RawHttpClient.get(server.base, '/v1/exports/tickets.csv?from=2026-01-01&to=2026-01-20', { Authorization: `Bearer ${bigOrgToken}`, 'Accept-Encoding': 'gzip' })
    await eventually(() => client.endedCleanly(), 10_000, 'the gzip body')
    const raw = Buffer.from(client.text(), 'latin1')
    const headerEnd = raw.indexOf('\r\n\r\n')
    const head = raw.subarray(0, headerEnd).toString()
    expect(head).toMatch(/content-encoding: gzip/i)
    expect(head).toMatch(/transfer-encoding: chunked/i)
    expect(gunzipSync(dechunk(raw.subarray(headerEnd + 4))).toString()).toBe(plain)
    expect(plain.split('\r\n').length).toBe(19 * 1440 + 2)
    client.destroy()
  })

  test('client disconnect mid-export: statement finalised, lease released, server keeps serving', async () => {
    const client = await RawHttpClient.get(server.base, '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31', { Authorization: `Bearer ${bigOrgToken}` })
    await eventually(() => client.bytes > 100_000, 10_000, 'the first bytes')
    expect(server.app.pool.stats().leased).toBe(1)
    client.destroy()
    await eventually(() => server.app.pool.stats().leased === 0, 10_000, 'the lease to be released')
    expect(server.logger.lines.some((l) => l.includes('export_ended') && l.includes('"cancelled"'))).toBe(true)
    expect((await server.get('/v1/queues', bigOrgToken)).status).toBe(200)
  })

  test('a reader that stops reading: backpressure holds the export, the watchdog releases the statement and lease', async () => {
    const client = await RawHttpClient.get(server.base, '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31', { Authorization: `Bearer ${bigOrgToken}` }, { paused: true })
    await eventually(() => server.app.pool.stats().leased === 1, 5000, 'the export to start')
    await eventually(() => server.app.pool.stats().leased === 0, 15_000, 'the stalled export to be released')
    const stalled = server.logger.lines.find((l) => l.includes('export_ended') && l.includes('"stalled"'))
    expect(stalled).toBeDefined()
    // The socket's backpressure stopped the query: a small part of the 128,160 rows was formatted.
    expect(JSON.parse(stalled!).rows).toBeLessThan(40_000)
    client.resume()
    await client.closed
    expect(client.endedCleanly()).toBe(false)
    expect((await server.get('/v1/queues', bigOrgToken)).status).toBe(200)
  })

  test('slow reader over 200k rows: server memory stays bounded', async () => {
    // The server runs as a process of its own here, so that its RSS is not mixed with this
    // test process's garbage (the whole suite shares one process).
    const process_ = await startServerProcess({ DATA_DIR: server.dataDir, RATE_LIMIT_PER_MINUTE: '1000' })
    // The process that serves is the supervisor's worker.
    const [worker] = childrenOf(process_.process.pid)
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${worker}/status`, 'utf8'))![1]) * 1024
    try {
      // Warm up the code paths once, then measure.
      await (await fetch(`${process_.base}/v1/exports/tickets.csv?from=2026-01-01&to=2026-01-10`, { headers: { Authorization: `Bearer ${bigOrgToken}` } })).text()
      const before = rss()
      let peak = before
      const client = await RawHttpClient.get(process_.base, '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31', { Authorization: `Bearer ${bigOrgToken}`, Connection: 'close' })
      const closed = client.closed.then(() => true)
      // Read in bursts, slower than the server could write, until the response ends.
      while (!(await Promise.race([closed, Bun.sleep(2).then(() => false)]))) {
        client.pause()
        peak = Math.max(peak, rss())
        await Bun.sleep(2)
        client.resume()
        ;(client as unknown as { chunks: Buffer[] }).chunks = [] // keep the test's own memory flat
      }
      expect(client.bytes).toBeGreaterThan(15_000_000) // 128,160 rows
      expect((peak - before) / 2 ** 20).toBeLessThan(64)
    } finally {
      await process_.stop()
    }
  })

  test('a tenant file that fails mid-stream: the transfer is truncated, not completed', async () => {
    const failing = server.organisation()
    const db = openTenant(server.dataDir, failing.org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 200_000 })
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    db.close()
    const path = tenantFilePath(server.dataDir, failing.org.id)
    const client = await RawHttpClient.get(server.base, '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31', { Authorization: `Bearer ${failing.token}` }, { paused: true })
    await eventually(() => server.app.pool.stats().leased === 1, 5000, 'the export to start')
    truncateSync(path, Math.floor(statSync(path).size / 4)) // the file breaks under the iterator
    client.resume()
    await client.closed
    expect(client.text()).toContain(HEADER)
    expect(client.endedCleanly()).toBe(false)
    await eventually(() => server.app.pool.stats().leased === 0, 5000, 'the lease to be released')
    expect(server.logger.lines.some((l) => l.includes('export_failed'))).toBe(true)
    // Afterwards the organisation is answered 503, not an empty file.
    expect((await server.get('/v1/exports/tickets.csv?from=2026-01-01&to=2026-01-02', failing.token)).status).toBe(503)
  })
})

describe('an export in progress and the pages of the same organisation', () => {
  test('pages keep seeing new commits while a paused export holds its own snapshot', async () => {
    const server = await startServer({ rateLimitPerMinute: 100_000, exportStallTimeoutMs: 30_000 })
    const { org, token } = server.organisation()
    const db = openTenant(server.dataDir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 200_000 })
    const client = await RawHttpClient.get(server.base, '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31', { Authorization: `Bearer ${token}` }, { paused: true })
    try {
      await eventually(() => server.app.pool.stats().leased === 1, 5000, 'the export to start')
      // The administration application commits a new ticket while the export is held back.
      writeTickets(db, [{ id: 'fresh-1', number: 1, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: '2026-03-30T10:00:30.000Z' }])
      const page = (await (await server.get('/v1/tickets?from=2026-03-30&to=2026-03-31&queueId=q_zh', token)).json()) as { items: { id: string }[] }
      expect(page.items.map((item) => item.id)).toEqual(['fresh-1'])
      // The export itself reads the snapshot it started with: it does not contain the new row.
      client.resume()
      await eventually(() => client.endedCleanly(), 20_000, 'the whole export')
      expect(client.text()).not.toContain('fresh-1')
      expect(client.text()).toContain('\r\nt0128159,')
    } finally {
      client.destroy()
      db.close()
      await server.close()
    }
  })
})

