import { describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/clock.ts'
import { Pacer, WINDOW_MS } from './pacer.ts'

/** A pacer on a manual clock; `waits` records every sleep it asked for. */
function paced() {
  const clock = new ManualClock(1_000_000)
  const waits: number[] = []
  const pacer = new Pacer({ now: () => clock.now(), sleep: async (ms) => (waits.push(ms), clock.advance(ms)) })
  return { clock, waits, pacer }
}

const window = (limit: number, remaining: number, reset: number) =>
  new Headers({ 'X-RateLimit-Limit': String(limit), 'X-RateLimit-Remaining': String(remaining), 'X-RateLimit-Reset': String(reset) })

describe('the suite paces each token inside its minute window', () => {
  test('60 requests go at once; the 61st waits until the first leaves the window', async () => {
    const { clock, waits, pacer } = paced()
    const sentAt: number[] = []
    for (let i = 0; i < 61; i++) {
      await pacer.beforeRequest()
      sentAt.push(clock.now())
      clock.advance(10)
    }
    expect(waits).toHaveLength(1)
    expect(sentAt[60]! - sentAt[0]!).toBeGreaterThan(WINDOW_MS)
    // Never more than 60 in any 60 s.
    for (const t of sentAt) expect(sentAt.filter((u) => u >= t && u < t + WINDOW_MS).length).toBeLessThanOrEqual(60)
  })

  test("the server's word counts too: remaining 0 (another client spent the window) waits for its reset", async () => {
    const { clock, waits, pacer } = paced()
    pacer.afterResponse(window(60, 0, 42))
    await pacer.beforeRequest()
    expect(waits).toEqual([42_000 + 250])
    expect(clock.now()).toBe(1_000_000 + 42_250)
  })

  test('a lower advertised limit is honoured; a higher one never raises the pace above the contract', async () => {
    const low = paced()
    low.pacer.afterResponse(window(5, 5, 0))
    for (let i = 0; i < 6; i++) await low.pacer.beforeRequest()
    expect(low.waits).toHaveLength(1)
    const high = paced()
    high.pacer.afterResponse(window(1000, 1000, 0))
    for (let i = 0; i < 61; i++) await high.pacer.beforeRequest()
    expect(high.waits).toHaveLength(1)
  })

  test('answers without the headers (401, 404) change nothing; a request that means to exceed the window is counted without waiting', async () => {
    const { waits, pacer } = paced()
    pacer.afterResponse(new Headers())
    for (let i = 0; i < 70; i++) await pacer.beforeRequest({ wait: false })
    expect(waits).toEqual([])
    await pacer.beforeRequest()
    expect(waits).toHaveLength(1)
  })
})
