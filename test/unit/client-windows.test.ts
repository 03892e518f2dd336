import { describe, expect, test } from 'bun:test'
import { splitIntoWindows, toInstant } from '../../src/client/windows.ts'
import { parseInstant } from '../../src/contract/instant.ts'

describe("the client reads from/to as the server does", () => {
  test.each(['2026-03-01', '2026-03-01T01:00:00.5+01:00', '2026-03-01t00:00:00z', '2026-03-01T00:00:00.0005Z', '2024-02-29'])('%p: the same instant', (raw) => {
    const server = parseInstant(raw)
    expect(server.ok).toBe(true)
    expect(toInstant(raw, 'from')).toBe((server as { ms: number }).ms)
  })

  test('a fraction finer than a millisecond rounds up, as on the server', () => {
    expect(new Date(toInstant('2026-03-01T00:00:00.0005Z', 'from')).toISOString()).toBe('2026-03-01T00:00:00.001Z')
  })

  test.each([
    ['2026-02-30', 'not a real calendar date'],
    ['2026-03-01T00:00:00', 'has no UTC offset'],
    ['last tuesday', 'is not an RFC 3339 date-time'],
    ['2026-03-01T00:00:60Z', 'leap second'],
  ])('%p is refused with the server\'s reason', (raw, reason) => {
    expect(() => toInstant(raw, 'from')).toThrow(reason)
  })

  test('Dates and epoch milliseconds pass through; an invalid Date is refused', () => {
    expect(toInstant(new Date(5), 'to')).toBe(5)
    expect(toInstant(7, 'to')).toBe(7)
    expect(() => toInstant(new Date(NaN), 'to')).toThrow('to is not a valid instant')
  })

  test('windows of at most 90 days, each starting where the last ended', () => {
    const day = 86_400_000
    expect(splitIntoWindows(0, 200 * day)).toEqual([
      { fromMs: 0, toMs: 90 * day },
      { fromMs: 90 * day, toMs: 180 * day },
      { fromMs: 180 * day, toMs: 200 * day },
    ])
    expect(splitIntoWindows(0, 90 * day)).toEqual([{ fromMs: 0, toMs: 90 * day }])
  })
})
