import { describe, expect, test } from 'bun:test'
import { describeWindow } from '../../src/limits/state.ts'
import { Random } from '../../src/seed/random.ts'

describe('describeWindow on fractional milliseconds (the monotonic clock)', () => {
  test('a request counted just now resets in exactly the window, never a second more', () => {
    const random = new Random('window-state')
    for (let i = 0; i < 100_000; i++) {
      // performance.now()-like times: hours of uptime, with every bit of a double's fraction.
      const now = (random.next() + random.next() * 2 ** -32) * 1e7
      const state = describeWindow({ limit: 60, windowMs: 60_000, now, count: 60, newest: now, blocking: now })
      expect(state.resetSeconds).toBe(60)
      expect(state.retryAfterSeconds).toBe(60)
    }
  })
})
