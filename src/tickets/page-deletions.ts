import type { Ticket } from '../contract/schemas.ts'

export interface Tombstone {
  id: string
  createdAt: string
}

/**
 * One changedAfter page out of the changed rows and the tombstones of the same range, each read
 * up to `limit` + 1 after the cursor in (createdAt, id) order: the first `limit` entries of both
 * together, so that a page holds at most `limit` entries of either kind and its cursor (the last
 * entry's position, a row's or a tombstone's) continues both walks (docs/api.md#deletes).
 */
export function mergeDeletions(rows: readonly Ticket[], tombstones: readonly Tombstone[], limit: number): { rows: Ticket[]; deleted: Tombstone[]; hasMore: boolean } {
  const kept: Ticket[] = []
  const deleted: Tombstone[] = []
  let r = 0
  let t = 0
  while (kept.length + deleted.length < limit && (r < rows.length || t < tombstones.length)) {
    const row = rows[r]
    const tombstone = tombstones[t]
    if (row && (!tombstone || before(row, tombstone))) kept.push(rows[r++]!)
    else deleted.push(tombstones[t++]!)
  }
  return { rows: kept, deleted, hasMore: r < rows.length || t < tombstones.length }
}

function before(a: Tombstone, b: Tombstone): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)
}
