import { MAX_RANGE_MS } from '../../src/contract/vocabulary.ts'
import { TicketPageSchema, type Ticket, type TicketPage } from '../../src/contract/schemas.ts'
import { expectCanonicalTimestamps, expectSchema, expectStatus, iso, query } from './assertions.ts'
import type { Check, SuiteContext } from './check.ts'

/**
 * A small range found in the data, so that the suite needs no knowledge of the deployment: its
 * `rows` are every ticket of [from, to), as the first page of the window read them, few enough
 * for a walk of a few pages and an export that is quick to compare.
 */
export interface Sample {
  from: string
  to: string
  rows: Ticket[]
  /** The page the range was cut from: the first rows of a 90-day window. */
  reference: { path: string; page: TicketPage }
}

/** Rows read from a window's start; the range is cut from these. */
const REFERENCE_ROWS = 20
/** The most rows a sample holds: a walk at limit 3 is then at most three pages. */
export const MAX_SAMPLE_ROWS = 8
/** How many 90-day windows, going back from now, are looked at for tickets. */
const WINDOWS = 4

/**
 * Cuts the range from the first row: a window read whole (no nextCursor) of at most
 * MAX_SAMPLE_ROWS rows up to its last row; otherwise up to (excluding) the instant of row m, for
 * the largest m ≤ MAX_SAMPLE_ROWS where rows m - 1 and m differ in createdAt, so that the range
 * holds exactly rows 0..m-1. At least two rows, so that there is a cursor to follow.
 */
export function cutSample(page: TicketPage): Pick<Sample, 'from' | 'to' | 'rows'> | null {
  const items = page.items
  if (items.length < 2) return null
  // Up to just after the last row, not the window's end (a minute past now): a ticket created
  // while the suite runs must not join the range.
  if (page.nextCursor === null && items.length <= MAX_SAMPLE_ROWS) return { from: items[0]!.createdAt, to: iso(Date.parse(items.at(-1)!.createdAt) + 1), rows: items }
  for (let m = Math.min(items.length - 1, MAX_SAMPLE_ROWS); m >= 2; m--) {
    if (items[m]!.createdAt > items[m - 1]!.createdAt) return { from: items[0]!.createdAt, to: items[m]!.createdAt, rows: items.slice(0, m) }
  }
  return null
}

/** The first check: finds the sample that the data checks use. */
export const discovery: Check = {
  name: 'a range with tickets is found from the data (a window of exactly 90 days is accepted)',
  cost: { main: WINDOWS },
  async run(context: SuiteContext) {
    // A minute past now, so that tickets created while the suite starts are inside the first window.
    const end = Math.ceil(context.clock.now() / 60_000) * 60_000 + 60_000
    for (let window = 0; window < WINDOWS; window++) {
      const to = iso(end - window * MAX_RANGE_MS)
      const from = iso(end - (window + 1) * MAX_RANGE_MS)
      const path = `/v1/tickets?${query([['from', from], ['to', to], ['limit', String(REFERENCE_ROWS)]])}`
      const exchange = await context.client.get(path)
      expectStatus(exchange, 200)
      const page = exchange.json<TicketPage>()
      expectSchema(TicketPageSchema, page, path)
      expectCanonicalTimestamps(page.items)
      if (page.items.length === 0) continue
      const cut = cutSample(page)
      if (!cut) throw new Error(`no range of 2 to ${MAX_SAMPLE_ROWS} tickets can be cut from the first ${page.items.length} after ${from} (too few, or too many at one instant)`)
      context.setSample({ ...cut, reference: { path, page } })
      return
    }
    throw new Error(`no ticket was found in the last ${WINDOWS * 90} days; the checks of rows, pages and exports need some`)
  },
}
