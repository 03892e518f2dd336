import { expect } from 'bun:test'
import { TICKET_FIELDS, TICKET_STATUSES } from '../../../src/contract/vocabulary.ts'
import { TicketPageSchema, type Ticket, type TicketPage } from '../../../src/contract/schemas.ts'
import { expectCanonicalTimestamps, expectError, expectOrdered, expectSchema, expectStatus, iso, query } from '../assertions.ts'
import type { CheckGroup, SuiteContext } from '../check.ts'
import type { Sample } from '../sample.ts'

/** The sample's range as query pairs, with extra pairs (filters, limit, cursor). */
export function rangeQuery(sample: Pick<Sample, 'from' | 'to'>, extra: [string, string][] = []): string {
  return query([['from', sample.from], ['to', sample.to], ...extra])
}

/** Reads one page and checks what every page must be: 200, the schema, at most `limit` rows. */
export async function readPage(context: SuiteContext, path: string, limit: number): Promise<TicketPage> {
  const exchange = await context.client.get(path)
  expectStatus(exchange, 200)
  const page = exchange.json<TicketPage>()
  expectSchema(TicketPageSchema, page, path)
  expect(page.items.length).toBeLessThanOrEqual(limit)
  for (const item of page.items) expect(Object.keys(item)).toEqual([...TICKET_FIELDS])
  expectCanonicalTimestamps(page.items)
  return page
}

/** The limit that walks the sample in two or three pages. */
const walkLimit = (rows: number) => (rows >= 4 ? 3 : 1)
const MAX_WALK_PAGES = 3

/** How many filter combinations `filterCases` gives: one request each for pages, one for exports. */
export const FILTER_CASES = 4

/** Filter combinations over the sample, each with the rows it must select. */
export function filterCases(sample: Sample): { label: string; pairs: [string, string][]; keep: (row: Ticket) => boolean }[] {
  const first = sample.rows[0]!
  const second = sample.rows.find((row) => row.queueId !== first.queueId) ?? first
  const otherStatus = TICKET_STATUSES.find((status) => status !== first.status)!
  return [
    { label: `queueId=${first.queueId}`, pairs: [['queueId', first.queueId]], keep: (row) => row.queueId === first.queueId },
    {
      label: `locationId and two statuses`,
      pairs: [['locationId', first.locationId], ['status', otherStatus], ['status', first.status]],
      keep: (row) => row.locationId === first.locationId && (row.status === first.status || row.status === otherStatus),
    },
    {
      label: 'two queueIds and a status',
      pairs: [['queueId', first.queueId], ['queueId', second.queueId], ['status', first.status]],
      keep: (row) => (row.queueId === first.queueId || row.queueId === second.queueId) && row.status === first.status,
    },
    // A value is never split on commas: "a,b" is one id, which matches nothing here.
    { label: 'queueId with a comma', pairs: [['queueId', `${first.queueId},${first.queueId}`]], keep: () => false },
  ]
}

export const paginationChecks: CheckGroup = {
  title: 'GET /v1/tickets: rows, pages and cursors over the discovered range',
  checks: [
    {
      name: 'rows are ordered by createdAt then id, each within [from, to)',
      cost: {},
      async run(context) {
        const { reference, from, to, rows } = context.sample()
        expectOrdered(reference.page.items, reference.path)
        for (const row of rows) expect({ id: row.id, inRange: row.createdAt >= from && row.createdAt < to }).toEqual({ id: row.id, inRange: true })
      },
    },
    {
      name: 'walking the cursors returns every row of the range exactly once, in order; only a full page has a cursor',
      cost: { main: MAX_WALK_PAGES },
      async run(context) {
        const sample = context.sample()
        const limit = walkLimit(sample.rows.length)
        const walked: Ticket[] = []
        let cursor: string | null = null
        let pages = 0
        do {
          expect(++pages).toBeLessThanOrEqual(MAX_WALK_PAGES)
          const extra: [string, string][] = [['limit', String(limit)], ...(cursor ? [['cursor', cursor] as [string, string]] : [])]
          const page: TicketPage = await readPage(context, `/v1/tickets?${rangeQuery(sample, extra)}`, limit)
          if (page.nextCursor !== null) expect(page.items).toHaveLength(limit)
          walked.push(...page.items)
          cursor = page.nextCursor
        } while (cursor !== null)
        expectOrdered(walked, 'the walked rows')
        expect(walked).toEqual(sample.rows)
      },
    },
    {
      name: 'nextCursor is null on a full last page when no further row exists',
      cost: { main: 1 },
      async run(context) {
        const sample = context.sample()
        const limit = sample.rows.length
        const page = await readPage(context, `/v1/tickets?${rangeQuery(sample, [['limit', String(limit)]])}`, limit)
        expect(page.items).toEqual(sample.rows)
        expect(page.nextCursor).toBeNull()
      },
    },
    {
      name: 'a cursor is bound to its query: refused with another filter or range, accepted with the same instants written otherwise and another limit',
      cost: { main: 4 },
      async run(context) {
        const sample = context.sample()
        const first = await readPage(context, `/v1/tickets?${rangeQuery(sample, [['limit', '1']])}`, 1)
        expect(first.nextCursor).not.toBeNull()
        const cursor: [string, string] = ['cursor', first.nextCursor!]
        expectError(await context.client.get(`/v1/tickets?${rangeQuery(sample, [['status', sample.rows[0]!.status], cursor])}`), 'invalid_request', 'cursor')
        const longer = { from: sample.from, to: iso(Date.parse(sample.to) + 1) }
        expectError(await context.client.get(`/v1/tickets?${rangeQuery(longer, [cursor])}`), 'invalid_request', 'cursor')
        // The same instants: `from` in lower case with a +01:00 offset (its '+' sent as a space, as
        // an unencoded query string decodes it), `to` as given; the limit may change between pages.
        const shifted = new Date(Date.parse(sample.from) + 3_600_000).toISOString().replace('T', 't').replace(/Z$/, ' 01:00')
        const next = await readPage(context, `/v1/tickets?${query([['from', shifted], ['to', sample.to], ['limit', '2'], cursor])}`, 2)
        expect(next.items).toEqual(sample.rows.slice(1, 3))
      },
    },
    {
      name: "a cursor of another organisation is refused",
      cost: { main: 1, demo: 1 },
      needs: ['API_DEMO_TOKEN', 'API_CONTRACT_DEMO_OK'],
      async run(context) {
        const sample = context.sample()
        const first = await readPage(context, `/v1/tickets?${rangeQuery(sample, [['limit', '1']])}`, 1)
        const other = await context.client.get(`/v1/tickets?${rangeQuery(sample, [['cursor', first.nextCursor!]])}`, 'demo')
        expectError(other, 'invalid_request', 'cursor')
      },
    },
    {
      name: 'filters select exactly the matching rows: queueId, locationId, several statuses; values are never split on commas',
      cost: { main: FILTER_CASES },
      async run(context) {
        const sample = context.sample()
        for (const { label, pairs, keep } of filterCases(sample)) {
          const page = await readPage(context, `/v1/tickets?${rangeQuery(sample, [...pairs, ['limit', '500']])}`, 500)
          expect({ filter: label, ids: page.items.map((row) => row.id) }).toEqual({ filter: label, ids: sample.rows.filter(keep).map((row) => row.id) })
          expect(page.nextCursor).toBeNull()
        }
      },
    },
  ],
}
