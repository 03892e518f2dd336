import { Database } from 'bun:sqlite'
import { ControlStore } from '../src/control/store.ts'
import { CursorCodec } from '../src/tickets/cursor.ts'
import { parseTicketQuery } from '../src/tickets/query.ts'
import { bigTenantFile, type BigTenant } from './data.ts'

/** Page paths over the big tenant for the service and the framework-free baseline, and a full cursor walk. */

/** Cursors spread over the 1M-row range (every 500th row), for our server and for the baseline; computed once (a window query over 1M rows). */
let cursorsCache: ReturnType<typeof computeCursors> | undefined

function computeCursors(data: BigTenant): { range: string; ours: string[]; baseline: string[] } {
  const store = new ControlStore(data.dataDir)
  const codec = new CursorCodec(store.cursorSigningKey())
  store.close()
  const db = new Database(bigTenantFile(data), { readonly: true })
  const positions = db
    .query(`SELECT created_at AS createdAt, id FROM (SELECT created_at, id, row_number() OVER (ORDER BY created_at, id) AS n FROM tickets) WHERE n % 500 = 0 ORDER BY n`)
    .all() as { createdAt: string; id: string }[]
  db.close()
  const range = `from=${data.range1m.from}&to=${data.range1m.to}`
  const query = parseTicketQuery(new URLSearchParams(range), 'page')
  return {
    range,
    ours: positions.map((p) => codec.encode(data.bigOrgId, query, p)),
    baseline: positions.map((p) => Buffer.from(JSON.stringify([p.createdAt, p.id])).toString('base64url')),
  }
}

/**
 * Page paths of `limit` rows at those cursors (their signature does not cover the limit, so the
 * same cursors serve any page size), and the path of the last full page.
 */
export function cursorPaths(data: BigTenant, limit = 500): { ours: string[]; baseline: string[]; last: { ours: string; baseline: string } } {
  const cursors = (cursorsCache ??= computeCursors(data))
  const ours = cursors.ours.map((cursor) => `/v1/tickets?${cursors.range}&limit=${limit}&cursor=${cursor}`)
  const baseline = cursors.baseline.map((cursor) => `/?${cursors.range}&limit=${limit}&cursor=${cursor}`)
  // The last full page: 500 rows before the end.
  const lastIndex = Math.floor((data.bigTickets - 501) / 500) - 1
  return { ours, baseline, last: { ours: ours[lastIndex]!, baseline: baseline[lastIndex]! } }
}

/** Seconds to read every row of `firstPage` by following nextCursor, one request at a time. */
export async function cursorWalk(firstPage: string, headers: Record<string, string>, expectedRows: number): Promise<number> {
  const started = performance.now()
  let cursor: string | null = null
  let rowsRead = 0
  do {
    const response: Response = await fetch(`${firstPage}${cursor ? `&cursor=${cursor}` : ''}`, { headers })
    const page = (await response.json()) as { items: unknown[]; nextCursor: string | null }
    rowsRead += page.items.length
    cursor = page.nextCursor
  } while (cursor)
  if (rowsRead !== expectedRows) throw new Error(`walk read ${rowsRead} of ${expectedRows}`)
  return (performance.now() - started) / 1000
}
