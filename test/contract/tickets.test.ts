import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { CANARY, standardTickets, writeStructure, writeTickets, type FixtureTicket } from '../support/fixtures.ts'
import { securitySuite } from '../support/security-suite.ts'
import { Random } from '../../src/seed/random.ts'
import { TICKET_FIELDS, TICKET_FILTERS } from '../../src/contract/vocabulary.ts'

securitySuite('/v1/tickets?from=2026-03-01&to=2026-03-05')

interface Page {
  items: Record<string, unknown>[]
  nextCursor: string | null
}

async function page(server: TestServer, token: string, query: string): Promise<Page> {
  const response = await server.get(`/v1/tickets?${query}`, token)
  expect(response.status).toBe(200)
  return (await response.json()) as Page
}

/** Follows nextCursor to the end; returns every row and the pages' sizes. */
async function walk(server: TestServer, token: string, query: string, limit: number) {
  const rows: Record<string, unknown>[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const result: Page = await page(server, token, `${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    rows.push(...result.items)
    // A full page is the only kind that may carry a cursor; a cursor never points past the end.
    if (result.nextCursor !== null) expect(result.items).toHaveLength(limit)
    cursor = result.nextCursor
    expect(++pages).toBeLessThan(10_000)
  } while (cursor !== null)
  return rows
}

describe('GET /v1/tickets rows', () => {
  let server: TestServer
  let token: string

  beforeAll(async () => {
    server = await startServer()
    token = server.seeded({
      tickets: [
        ...standardTickets(),
        { id: 'edge-from', number: 7, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: '2026-03-04T00:00:00.000Z' },
        { id: 'edge-to', number: 8, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: '2026-03-04T23:59:59.999Z' },
        { id: 'edge-after', number: 9, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: '2026-03-05T00:00:00.000Z' },
      ],
    }).token
  })
  afterAll(() => server.close())

  test('the 12 contract fields, in order, nulls as null, number an integer', async () => {
    const { items, nextCursor } = await page(server, token, 'from=2026-03-02&to=2026-03-03')
    expect(nextCursor).toBeNull()
    expect(items.map((t) => t.id)).toEqual(['t-001', 't-002', 't-003'])
    for (const item of items) expect(Object.keys(item)).toEqual([...TICKET_FIELDS])
    expect(items[1]).toEqual({
      id: 't-002', number: 2, queueId: 'q_pay', locationId: 'loc_a', status: 'CANCELED',
      createdAt: '2026-03-02T09:00:00.000Z', calledAt: null, completedAt: null, cancelledAt: '2026-03-02T09:03:00.000Z',
      skippedAt: null, noShowAt: null, calledByDeviceSessionId: null,
    })
    const text = JSON.stringify(items)
    for (const value of Object.values(CANARY)) expect(text).not.toContain(String(value))
  })

  test('an over-long cursor is refused unread: 400 naming the parameter', async () => {
    const response = await server.get(`/v1/tickets?from=2026-03-01&to=2026-03-05&cursor=${'A'.repeat(12_001)}.${'B'.repeat(22)}`, token)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: 'invalid_request', param: 'cursor' })
  })

  test('long ticket ids, in ASCII and beyond it, page through: every cursor made is accepted', async () => {
    const org = server.organisation()
    const db = openTenant(server.dataDir, org.org.id)
    writeStructure(db)
    const ids = ['a'.repeat(2_500), '票'.repeat(900), 'b'.repeat(2_500) + '票'.repeat(900)]
    writeTickets(db, ids.map((id, i) => ({ id, number: i + 1, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: `2026-03-02T09:00:0${i}.000Z` })))
    db.close()
    const rows = await walk(server, org.token, 'from=2026-03-01&to=2026-03-05', 1)
    expect(rows.map((row) => row.id)).toEqual(ids)
  })

  test('from inclusive, to exclusive, to the millisecond; offsets converted to UTC', async () => {
    const ids = async (query: string) => (await page(server, token, query)).items.map((t) => t.id)
    expect(await ids('from=2026-03-04T00:00:00.000Z&to=2026-03-04T23:59:59.999Z')).toEqual(['edge-from'])
    expect(await ids('from=2026-03-04T00:00:00.001Z&to=2026-03-05T00:00:00.000Z')).toEqual(['edge-to'])
    expect(await ids('from=2026-03-04T23:59:59.999Z&to=2026-03-05T00:00:00.001Z')).toEqual(['edge-to', 'edge-after'])
    // 01:00 at +01:00 is midnight UTC.
    expect(await ids('from=2026-03-04T01:00:00%2B01:00&to=2026-03-04T12:00:00Z')).toEqual(['edge-from'])
    expect(await ids('from=2026-03-04T01:00:00 01:00&to=2026-03-04T12:00:00Z')).toEqual(['edge-from'])
  })

  test('filters: queue, location, status, several values, ids that match nothing', async () => {
    const ids = async (query: string) => (await page(server, token, `from=2026-03-01&to=2026-03-05&${query}`)).items.map((t) => t.id)
    expect(await ids('queueId=q_zh&status=WAITING&status=CALLED')).toEqual(['t-005', 't-006'])
    expect(await ids('locationId=loc_a&queueId=q_id')).toEqual(['t-003'])
    expect(await ids('queueId=q_id&queueId=q_zh&status=SKIPPED&status=NO_SHOW')).toEqual(['t-003', 't-004'])
    expect(await ids('queueId=nope')).toEqual([])
    expect(await ids('queueId=q_pay,q_zh')).toEqual([]) // never split on the comma
  })

  test('every filter of the one table (contract/vocabulary.ts) selects on its field, one value or several, in pages and the export alike', async () => {
    const range = 'from=2026-03-01&to=2026-03-05'
    const all = (await page(server, token, `${range}&limit=500`)).items
    for (const filter of TICKET_FILTERS) {
      const seen = [...new Set(all.map((ticket) => ticket[filter.field]).filter((value): value is string => typeof value === 'string'))].sort()
      expect(seen.length).toBeGreaterThan(1)
      for (const chosen of [seen.slice(0, 1), seen.slice(0, 2)]) {
        const query = `${range}&limit=500&${chosen.map((value) => `${filter.parameter}=${encodeURIComponent(value)}`).join('&')}`
        const expected = all.filter((ticket) => chosen.includes(ticket[filter.field] as string)).map((ticket) => ticket.id)
        expect({ query, ids: (await page(server, token, query)).items.map((ticket) => ticket.id) }).toEqual({ query, ids: expected })
        const csv = await (await server.get(`/v1/exports/tickets.csv?${query.replace('&limit=500', '')}`, token)).text()
        expect({ query, rows: csv.trim().split('\r\n').length - 1 }).toEqual({ query, rows: expected.length })
      }
    }
  })
})

describe('keyset pagination', () => {
  let server: TestServer
  let token: string
  let db: Database
  let orgId: string

  beforeAll(async () => {
    server = await startServer({ rateLimitPerMinute: 1_000_000 })
    const created = server.organisation()
    token = created.token
    orgId = created.org.id
    db = openTenant(server.dataDir, orgId)
    writeStructure(db)
  })
  afterAll(async () => {
    db.close()
    await server.close()
  })

  test('property: walking the cursors returns exactly the rows of a direct SQL query, in order', async () => {
    const random = new Random('pagination-property')
    const queues = [['q_pay', 'loc_a'], ['q_id', 'loc_a'], ['q_old', 'loc_a'], ['q_zh', 'loc_b']] as const
    const statuses = ['WAITING', 'CALLED', 'COMPLETED', 'CANCELED', 'SKIPPED', 'NO_SHOW']
    // Ids that sort oddly (case, digits, punctuation, non-ASCII) and many ties on createdAt.
    const idParts = ['a', 'B', 'z', '0', '9', '_', '-', 'é', 'Ω', ' ', ',', '"']
    const tickets: FixtureTicket[] = []
    const seen = new Set<string>()
    while (tickets.length < 1500) {
      let id = ''
      for (let i = random.int(1, 6); i > 0; i--) id += random.pick(idParts)
      if (seen.has(id)) continue
      seen.add(id)
      const [queueId, locationId] = random.pick(queues)
      const minute = random.int(0, 60 * 24 * 6)
      tickets.push({ id, number: tickets.length, queueId, locationId, status: random.pick(statuses), createdAt: new Date(Date.parse('2026-03-01T00:00:00Z') + minute * 60_000).toISOString() })
    }
    writeTickets(db, tickets)

    for (let trial = 0; trial < 25; trial++) {
      const filters: string[] = []
      const where: string[] = []
      const args: string[] = []
      for (const [param, column, pool] of [
        ['queueId', 'queue_id', queues.map((q) => q[0])],
        ['locationId', 'location_id', ['loc_a', 'loc_b']],
        ['status', 'status', statuses],
      ] as const) {
        if (!random.chance(0.4)) continue
        const chosen = [...new Set(Array.from({ length: random.int(1, 3) }, () => random.pick(pool as readonly string[])))]
        filters.push(...chosen.map((v) => `${param}=${encodeURIComponent(v)}`))
        where.push(`${column} IN (${chosen.map(() => '?').join(',')})`)
        args.push(...chosen)
      }
      const fromDay = random.int(1, 4)
      const from = `2026-03-0${fromDay}T0${random.int(0, 9)}:00:00Z`
      const to = `2026-03-0${fromDay + random.int(1, 3)}T00:00:00Z`
      const expected = (db
        .query(`SELECT id FROM tickets WHERE created_at >= ? AND created_at < ? ${where.map((w) => `AND ${w}`).join(' ')} ORDER BY created_at, id`)
        .all(new Date(from).toISOString(), new Date(to).toISOString(), ...args) as { id: string }[]).map((r) => r.id)
      const limit = random.pick([1, 2, 7, 50, 500])
      const rows = await walk(server, token, `from=${from}&to=${to}&${filters.join('&')}`, limit)
      const ids = rows.map((r) => r.id as string)
      expect(ids).toEqual(expected)
      expect(new Set(ids).size).toBe(ids.length)
    }
  })

  test('writes during a walk: no duplicates, nothing pre-existing skipped, new rows past the cursor appear', async () => {
    const query = 'from=2026-03-10&to=2026-03-12'
    const initial: FixtureTicket[] = Array.from({ length: 300 }, (_, i) => ({
      id: `w-${String(i).padStart(4, '0')}`, number: i, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING',
      createdAt: new Date(Date.parse('2026-03-10T08:00:00Z') + Math.floor(i / 3) * 60_000).toISOString(),
    }))
    writeTickets(db, initial)
    const seen: string[] = []
    let cursor: string | null = null
    let round = 0
    do {
      const result: Page = await page(server, token, `${query}&limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      seen.push(...result.items.map((t) => t.id as string))
      cursor = result.nextCursor
      round++
      // Between pages the administration application inserts before and after the cursor and changes statuses.
      writeTickets(db, [
        { id: `before-${round}`, number: 0, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-10T00:00:00.000Z' },
        { id: `after-${round}`, number: 0, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-11T23:00:00.000Z' },
      ])
      db.run("UPDATE tickets SET status = 'CALLED', called_at = '2026-03-10T12:00:00.000Z' WHERE id = ?", [`w-${String(round * 7).padStart(4, '0')}`])
    } while (cursor !== null)
    expect(new Set(seen).size).toBe(seen.length)
    for (const t of initial) expect(seen).toContain(t.id)
    expect(seen.filter((id) => id.startsWith('after-')).length).toBeGreaterThan(0)
    expect(seen.filter((id) => id.startsWith('before-')).length).toBeLessThan(round) // rows behind the cursor are not revisited
  })
})
