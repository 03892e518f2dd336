import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { parseCsv } from '../support/fixtures.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'

const FROM = Date.parse('2026-03-01T00:00:00.000Z')
const TO = Date.parse('2026-03-08T00:00:00.000Z')
const QUERY = 'from=2026-03-01&to=2026-03-08'
const BATCH = 25

describe('reading while the administration application writes', () => {
  let server: TestServer
  let token: string
  let orgId: string
  let initialIds: string[]

  beforeAll(async () => {
    server = await startServer({ rateLimitPerMinute: 1_000_000, exportsPerToken: 8 }) // 8 exports of one token at once
    const created = server.seeded({ bulk: { count: 20_000, idPrefix: 'init-', start: '2026-03-01', everySeconds: 30, queueId: 'q_id' } })
    token = created.token
    orgId = created.org.id
    const db = openTenant(server.dataDir, orgId)
    initialIds = (db.query('SELECT id FROM tickets ORDER BY id').all() as { id: string }[]).map((r) => r.id)
    db.close()
  })
  afterAll(() => server.close())

  test('8 exports and 32 page walks during continuous writes: no errors, whole batches, exact walks', async () => {
    const writer = Bun.spawn([process.execPath, 'test/support/tenant-writer.ts', tenantFilePath(server.dataDir, orgId), String(FROM), String(TO), String(BATCH)], { stdout: 'pipe', stderr: 'inherit' })
    await writer.stdout.getReader().read() // "ready"
    try {
      const exports = Array.from({ length: 8 }, async () => {
        const response = await server.get(`/v1/exports/tickets.csv?${QUERY}`, token)
        expect(response.status).toBe(200)
        return parseCsv(await response.text())
      })
      const walks = Array.from({ length: 32 }, async () => {
        const ids: string[] = []
        let cursor: string | null = null
        do {
          const response: Response = await server.get(`/v1/tickets?${QUERY}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token)
          expect(response.status).toBe(200)
          const page = (await response.json()) as { items: { id: string }[]; nextCursor: string | null }
          ids.push(...page.items.map((t) => t.id))
          cursor = page.nextCursor
        } while (cursor)
        return ids
      })
      const [csvs, walked] = await Promise.all([Promise.all(exports), Promise.all(walks)])

      let batchesSeen = 0
      for (const rows of csvs) {
        // One consistent snapshot: every batch whole, and one status per batch.
        const batches = new Map<string, Set<string>>()
        const counts = new Map<string, number>()
        for (const row of rows) {
          if (!row.id!.startsWith('b')) continue
          const batch = row.id!.slice(0, 7)
          counts.set(batch, (counts.get(batch) ?? 0) + 1)
          batches.set(batch, (batches.get(batch) ?? new Set()).add(row.status!))
        }
        for (const [batch, count] of counts) expect({ batch, count }).toEqual({ batch, count: BATCH })
        for (const [batch, seen] of batches) expect({ batch, statuses: seen.size }).toEqual({ batch, statuses: 1 })
        batchesSeen += counts.size
        // In (createdAt, id) order, as the pages are.
        const keys = rows.map((r) => `${r.createdAt}\u0000${r.id}`)
        expect(keys).toEqual([...keys].sort())
        expect(rows.filter((r) => r.id!.startsWith('init-')).length).toBe(initialIds.length)
      }
      for (const ids of walked) {
        expect(new Set(ids).size).toBe(ids.length) // no duplicates
        const seen = new Set(ids)
        for (const id of initialIds) if (!seen.has(id)) throw new Error(`walk skipped ${id}`)
      }
      expect(batchesSeen).toBeGreaterThan(0) // the writer did write during the exports
      expect(server.logger.lines.filter((l) => l.includes('"level":"error"'))).toEqual([])
    } finally {
      writer.kill()
      await writer.exited
    }
  }, 120_000)
})
