import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { writeBulkTickets, writeStructure, writeTickets } from '../support/fixtures.ts'
import { RawHttpClient, eventually } from '../support/raw-http.ts'
import { loadCsv, loadPages, tenantRows, upsert, type TicketText } from '../support/loader.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'

/**
 * Tokens are never later than the data they came with (docs/api.md#loading-incrementally): a change
 * committed after a response read its snapshot comes with the next run, however the commit
 * falls between the token's read and the rows' read.
 */

let server: TestServer
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 1_000_000, exportStallTimeoutMs: 30_000 })
})
afterAll(() => server.close())

describe('a writer commits while a response is being read', () => {
  test('the export held after its token was read: the commit is not in it, and the next run delivers it', async () => {
    const { org, token: apiToken } = server.organisation()
    const db = openTenant(server.dataDir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 200_000 })
    const query = 'from=2026-01-01&to=2026-03-31'
    const client = await RawHttpClient.get(server.base, `/v1/exports/tickets.csv?${query}`, { Authorization: `Bearer ${apiToken}` }, { paused: true })
    try {
      await eventually(() => server.app.pool.stats().leased === 1, 5000, 'the export to start')
      // The administration application changes the export's last row and adds one, while the
      // export has sent its headers (the token) and has most of its rows still to read.
      db.exec(`UPDATE tickets SET status = 'CANCELED', cancelled_at = '2026-03-30T00:00:00.000Z' WHERE id = 't0128159'`)
      writeTickets(db, [{ id: 'fresh-1', number: 1, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: '2026-03-30T10:00:30.000Z' }])
      client.resume()
      await eventually(() => client.endedCleanly(), 30_000, 'the whole export')
      const text = client.text()
      const token = /\r\nx-changes-token: ([^\r\n]+)\r\n/i.exec(text)![1]!
      expect(text).toContain('\r\nt0128159,128159,q_pay,loc_a,COMPLETED,')
      expect(text).not.toContain('fresh-1')

      const next = await loadPages(server, apiToken, query, token, { limit: 500 })
      expect(next.rows.map((row) => [row.id, row.status])).toEqual([['fresh-1', 'WAITING'], ['t0128159', 'CANCELED']])
      expect((await loadCsv(server, apiToken, query, token)).rows).toEqual(next.rows)
    } finally {
      client.destroy()
      db.close()
    }
  }, 60_000)
})

describe('a writer process committing all the time, loaders running meanwhile', () => {
  const FROM = Date.parse('2026-03-01T00:00:00.000Z')
  const TO = Date.parse('2026-03-08T00:00:00.000Z')
  const query = `from=${new Date(FROM).toISOString()}&to=${new Date(TO).toISOString()}`

  test('after the writer stops, one more run makes every loader copy exact', async () => {
    const { org, token: apiToken } = server.organisation()
    const db = openTenant(server.dataDir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 10_000, idPrefix: 'init-', start: '2026-03-01', everySeconds: 60 })
    // Inserts in batches spread over the range, and status changes of earlier batches (see the script).
    const writer = Bun.spawn([process.execPath, 'test/support/tenant-writer.ts', tenantFilePath(server.dataDir, org.id), String(FROM), String(TO), '25'], { stdout: 'pipe', stderr: 'inherit' })
    await writer.stdout.getReader().read() // "ready"

    const loaders = {
      pages: (changedAfter: string | null) => loadPages(server, apiToken, query, changedAfter, { limit: 200 }),
      csv: (changedAfter: string | null) => loadCsv(server, apiToken, query, changedAfter),
    }
    const copies = { pages: new Map<string, TicketText>(), csv: new Map<string, TicketText>() }
    const tokens: Record<keyof typeof loaders, string | null> = { pages: null, csv: null }
    const loop = async (name: keyof typeof loaders, runs: number) => {
      for (let run = 0; run < runs; run++) {
        const result = await loaders[name](tokens[name])
        upsert(copies[name], result.rows)
        tokens[name] = result.token
      }
    }
    try {
      await Promise.all([loop('pages', 8), loop('csv', 8)])
    } finally {
      writer.kill()
      await writer.exited
    }
    const batches = (db.query(`SELECT count(DISTINCT substr(id, 1, 7)) AS n FROM tickets WHERE id LIKE 'b%'`).get() as { n: number }).n
    expect(batches).toBeGreaterThan(8) // the writer did write during the runs
    await Promise.all([loop('pages', 1), loop('csv', 1)])
    const tenant = tenantRows(db, new Date(FROM).toISOString(), new Date(TO).toISOString())
    expect(copies.pages.size).toBe(tenant.size)
    expect(copies.pages).toEqual(tenant)
    expect(copies.csv).toEqual(tenant)
    expect(server.logger.lines.filter((line) => line.includes('"level":"error"'))).toEqual([])
    db.close()
  }, 120_000)
})
