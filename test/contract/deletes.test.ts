import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { standardTickets, writeTickets } from '../support/fixtures.ts'
import { DELETION_LOG_VERSION, TENANT_MIGRATIONS } from '../../src/tenant/migrations.ts'

/**
 * Deletes in the change feed (docs/api.md#deletes): a page of /v1/tickets with changedAfter
 * carries `deleted`, the ids of the range's tickets deleted after the token, merged with its
 * rows into at most `limit` entries in (createdAt, id) order; without changedAfter, or from a
 * file that records no deletes, the page has the contract's two members only.
 */

const RANGE = 'from=2026-03-01&to=2026-03-05'
let server: TestServer
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 1_000_000 })
})
afterAll(() => server.close())

async function page(token: string, query: string) {
  const response = await server.get(`/v1/tickets?${query}`, token)
  expect(response.status).toBe(200)
  return { body: (await response.json()) as { items: { id: string }[]; nextCursor: string | null; deleted?: string[] }, changesToken: response.headers.get('x-changes-token')! }
}

/** Every page with changedAfter, `limit` at a time: the rows' ids, the deleted ids, the page sizes. */
async function walk(token: string, changedAfter: string, limit: number, filter = '') {
  const rows: string[] = []
  const deleted: string[] = []
  const sizes: number[] = []
  let cursor: string | null = null
  for (let i = 0; i < 100; i++) {
    const query = `${RANGE}${filter}&limit=${limit}&changedAfter=${encodeURIComponent(changedAfter)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const { body } = await page(token, query)
    rows.push(...body.items.map((item) => item.id))
    deleted.push(...body.deleted!)
    sizes.push(body.items.length + body.deleted!.length)
    cursor = body.nextCursor
    if (cursor === null) break
  }
  return { rows, deleted, sizes }
}

test("the writer's deletes after a token come as `deleted`, merged with the changed rows in pages of at most `limit` entries, filters applied", async () => {
  const { org, token } = server.seeded({ tickets: standardTickets() })
  const { body, changesToken } = await page(token, RANGE)
  expect(Object.keys(body).sort()).toEqual(['items', 'nextCursor'])
  const all = body.items.map((item) => item.id)
  expect(all.length).toBeGreaterThanOrEqual(4)

  const writer = openTenant(server.dataDir, org.id)
  const [first, second, third] = all as [string, string, string]
  writer.exec(`DELETE FROM tickets WHERE id IN ('${first}', '${third}')`)
  writer.exec(`UPDATE tickets SET status = 'CANCELED', cancelled_at = '2026-03-04T00:00:00.000Z', called_at = NULL, completed_at = NULL, skipped_at = NULL, no_show_at = NULL, called_by_device_session_id = NULL WHERE id = '${second}'`)
  writeTickets(writer, [{ id: 'zz-new', number: 99, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-01T00:00:00.000Z' }])
  // Deleted after the range: not this range's.
  writer.exec(`DELETE FROM tickets WHERE created_at >= '2026-03-05'`)
  writer.close()

  for (const limit of [1, 2, 500]) {
    const run = await walk(token, changesToken, limit)
    expect(run.deleted.sort()).toEqual([first, third].sort())
    expect(run.rows.sort()).toEqual([second, 'zz-new'].sort())
    expect(Math.max(...run.sizes)).toBeLessThanOrEqual(limit)
  }
  // A filter selects the tombstones by the ticket's columns as it was deleted.
  const filtered = await walk(token, changesToken, 500, '&queueId=q_nowhere')
  expect(filtered).toEqual({ rows: [], deleted: [], sizes: [0] })

  // The token of this response is past the deletes: nothing more after it.
  const { changesToken: later } = await page(token, RANGE)
  expect(await walk(token, later, 500)).toEqual({ rows: [], deleted: [], sizes: [0] })
})

test('a file at a version without the deletion log: no `deleted` member (a loader then reconciles)', async () => {
  const { org, token } = server.seeded({ tickets: standardTickets() })
  const { changesToken } = await page(token, RANGE)
  const writer = openTenant(server.dataDir, org.id)
  const step = TENANT_MIGRATIONS[DELETION_LOG_VERSION - 1]!
  writer.exec(step.down!)
  writer.exec(`PRAGMA user_version = ${DELETION_LOG_VERSION - 1}`)
  writer.close()
  const { body } = await page(token, `${RANGE}&changedAfter=${encodeURIComponent(changesToken)}`)
  expect(Object.keys(body).sort()).toEqual(['items', 'nextCursor'])
})
