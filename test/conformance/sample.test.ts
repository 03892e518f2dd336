import { describe, expect, test } from 'bun:test'
import type { Ticket } from '../../src/contract/schemas.ts'
import { cutSample, MAX_SAMPLE_ROWS } from './sample.ts'

/** Rows at the given minutes past 09:00, ids in order. */
function rows(...minutes: number[]): Ticket[] {
  return minutes.map((minute, i) => ({
    id: `t-${String(i).padStart(3, '0')}`, number: i, queueId: 'q', locationId: 'l', status: 'WAITING',
    createdAt: new Date(Date.parse('2026-03-02T09:00:00Z') + minute * 60_000).toISOString(),
    calledAt: null, completedAt: null, cancelledAt: null, skippedAt: null, noShowAt: null, calledByDeviceSessionId: null,
  }))
}

describe('the range the data checks use, cut from the first page of a window', () => {
  test('up to the first instant after the most rows it may hold, never between two rows of one instant', () => {
    const items = rows(0, 0, 1, 2, 3, 4, 5, 6, 6, 6, 7, 8)
    const cut = cutSample({ items, nextCursor: 'more' })!
    // Rows 7 and 8 share 09:06, so the range ends before them, at 09:06 (exclusive).
    expect(cut.rows).toEqual(items.slice(0, 7))
    expect(cut).toMatchObject({ from: '2026-03-02T09:00:00.000Z', to: '2026-03-02T09:06:00.000Z' })
    expect(cut.rows.length).toBeLessThanOrEqual(MAX_SAMPLE_ROWS)
  })

  test('a small window read whole ends just after its last row, not at the window end', () => {
    const items = rows(0, 5, 5)
    expect(cutSample({ items, nextCursor: null })).toEqual({ from: items[0]!.createdAt, to: '2026-03-02T09:05:00.001Z', rows: items })
  })

  test('fewer than two rows, or more than fit all at one instant: no range', () => {
    expect(cutSample({ items: rows(0), nextCursor: null })).toBeNull()
    expect(cutSample({ items: rows(...Array(MAX_SAMPLE_ROWS + 2).fill(3)), nextCursor: 'more' })).toBeNull()
  })
})
