import type { Client } from '../client/index.ts'

/** Page size of the deletions walk: the contract's largest, so that a day's deletes are a request or two. */
const PAGE_LIMIT = 500

/**
 * The ids of the tickets created in `range` that the API says were deleted after `token` (the
 * `deleted` member of /v1/tickets pages with changedAfter, docs/api.md#deletes), or null when
 * the server's data does not record deletes (a page without `deleted`: an older server or tenant
 * file), in which case only --reconcile brings deletes. Called once a changes window's rows are
 * read, so that its answer is at least as recent as theirs: a ticket deleted after that export
 * is deleted here; one deleted and made again is in neither and comes with the next run.
 */
export async function deletedSince(client: Client, range: { fromMs: number; toMs: number }, token: string, signal?: AbortSignal): Promise<string[] | null> {
  const ids: string[] = []
  for await (const page of client.pages({ from: range.fromMs, to: range.toMs, changedAfter: token, limit: PAGE_LIMIT }, { signal })) {
    if (!Array.isArray(page.deleted)) return null
    ids.push(...page.deleted)
  }
  return ids
}
