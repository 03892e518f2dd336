import type { Database } from 'bun:sqlite'
import { TICKET_FIELDS } from '../../src/contract/vocabulary.ts'
import { parseCsv, ticketsInFile } from './fixtures.ts'
import type { TestServer } from './harness.ts'

/**
 * A warehouse loader as docs/api.md#loading-incrementally tells one to write it, over real HTTP:
 * one run reads every row of a query (with `changedAfter` from the previous run, if any) and
 * keeps the X-Changes-Token of the run's first response for the next run.
 */

/** A ticket as text, the same from a JSON page, a CSV row or the tenant file: null as ''. */
export type TicketText = Record<string, string>

export interface LoadRun {
  rows: TicketText[]
  /** The X-Changes-Token of the run's first response. */
  token: string | null
  /** Requests the run made. */
  requests: number
}

const asText = (row: Record<string, unknown>): TicketText =>
  Object.fromEntries(TICKET_FIELDS.map((field) => [field, row[field] === null || row[field] === undefined ? '' : String(row[field])]))

const withChangedAfter = (query: string, changedAfter: string | null) => (changedAfter === null ? query : `${query}&changedAfter=${encodeURIComponent(changedAfter)}`)

async function ok(response: Response): Promise<Response> {
  if (response.status !== 200) throw new Error(`loader got ${response.status}: ${await response.text()}`)
  return response
}

/** One run through the JSON pages, following nextCursor; `afterPage` runs between pages (a writer during the run). */
export async function loadPages(
  server: TestServer,
  apiToken: string,
  query: string,
  changedAfter: string | null,
  options: { limit?: number; afterPage?: (page: number) => void | Promise<void> } = {},
): Promise<LoadRun> {
  const rows: TicketText[] = []
  let token: string | null = null
  let cursor: string | null = null
  let requests = 0
  do {
    const path = `/v1/tickets?${withChangedAfter(query, changedAfter)}&limit=${options.limit ?? 100}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const response = await ok(await server.get(path, apiToken))
    if (requests++ === 0) token = response.headers.get('x-changes-token')
    const page = (await response.json()) as { items: Record<string, unknown>[]; nextCursor: string | null }
    rows.push(...page.items.map(asText))
    cursor = page.nextCursor
    if (cursor) await options.afterPage?.(requests)
  } while (cursor)
  return { rows, token, requests }
}

/** One run through the CSV export; `afterHeaders` runs once the response started, before its body is read. */
export async function loadCsv(
  server: TestServer,
  apiToken: string,
  query: string,
  changedAfter: string | null,
  options: { afterHeaders?: () => void | Promise<void> } = {},
): Promise<LoadRun> {
  const response = await ok(await server.get(`/v1/exports/tickets.csv?${withChangedAfter(query, changedAfter)}`, apiToken))
  const token = response.headers.get('x-changes-token')
  await options.afterHeaders?.()
  return { rows: (await parseCsv(await response.text())).map(asText), token, requests: 1 }
}

/** Upserts a run's rows into the loader's copy, by id. */
export function upsert(copy: Map<string, TicketText>, rows: TicketText[]): void {
  for (const row of rows) copy.set(row.id!, row)
}

/** The tenant's tickets of [from, to) as the administration application's file holds them now. */
export function tenantRows(db: Database, from: string, to: string, where = '1'): Map<string, TicketText> {
  return new Map(ticketsInFile(db, from, to, where).map((row) => [row.id, asText(row as unknown as Record<string, unknown>)]))
}
