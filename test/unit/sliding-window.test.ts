import { describe, expect, test } from 'bun:test'
import { SlidingWindowLog } from '../../src/limits/sliding-window.ts'
import { Random } from '../../src/seed/random.ts'

const T0 = 1_000_000

/** Counts a request if allowed, as the gate does; `allowed` tells whether this one was counted. */
function hit(limiter: SlidingWindowLog, key: string, now: number) {
  const state = limiter.peek(key, now)
  return state.allowed ? { ...limiter.record(key, now), allowed: true } : state
}

describe('SlidingWindowLog', () => {
  test('60 pass, the 61st is refused with Retry-After until the oldest leaves', () => {
    const limiter = new SlidingWindowLog(60)
    for (let i = 0; i < 60; i++) {
      const state = hit(limiter, 'k', T0 + i * 100)
      expect(state.allowed).toBe(true)
      expect(state.remaining).toBe(59 - i)
    }
    const refused = hit(limiter, 'k', T0 + 6000)
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 54 })
    // One millisecond before the oldest leaves: still refused. At the moment it leaves: exactly one passes.
    expect(hit(limiter, 'k', T0 + 59_999).allowed).toBe(false)
    expect(hit(limiter, 'k', T0 + 60_000).allowed).toBe(true)
    expect(hit(limiter, 'k', T0 + 60_000).allowed).toBe(false)
  })

  test('never more than the limit in any 60-second interval, across a minute boundary', () => {
    const limiter = new SlidingWindowLog(60)
    const accepted: number[] = []
    // 120 requests: 60 in the last second of one minute, 60 in the first second of the next.
    for (let i = 0; i < 120; i++) {
      const now = T0 + 59_000 + i * 16
      if (hit(limiter, 'k', now).allowed) accepted.push(now)
    }
    expect(accepted).toHaveLength(60)
    // Every 60-second interval starting at an accepted request holds at most 60.
    for (const start of accepted) expect(accepted.filter((t) => t >= start && t < start + 60_000).length).toBeLessThanOrEqual(60)
  })

  test('a random stream never exceeds the limit in any window', () => {
    const limiter = new SlidingWindowLog(10, 1000)
    const random = new Random('limiter-stream') // seeded: a failure can be replayed
    const accepted: number[] = []
    let now = 0
    for (let i = 0; i < 5000; i++) {
      now += random.int(0, 149)
      if (hit(limiter, 'k', now).allowed) accepted.push(now)
    }
    let j = 0
    for (let i = 0; i < accepted.length; i++) {
      while (accepted[j]! <= accepted[i]! - 1000) j++
      expect(i - j + 1).toBeLessThanOrEqual(10)
    }
  })

  test('reset is the whole seconds until the window is empty; 0 when empty', () => {
    const limiter = new SlidingWindowLog(60)
    expect(limiter.peek('k', T0)).toMatchObject({ remaining: 60, resetSeconds: 0, retryAfterSeconds: 0 })
    hit(limiter, 'k', T0)
    expect(limiter.peek('k', T0 + 500).resetSeconds).toBe(60) // 59.5 s rounded up
    expect(limiter.peek('k', T0 + 59_001).resetSeconds).toBe(1)
    expect(limiter.peek('k', T0 + 60_000)).toMatchObject({ remaining: 60, resetSeconds: 0 })
  })

  test('keys are independent', () => {
    const limiter = new SlidingWindowLog(2)
    hit(limiter, 'a', T0)
    hit(limiter, 'a', T0)
    expect(hit(limiter, 'a', T0).allowed).toBe(false)
    expect(hit(limiter, 'b', T0).allowed).toBe(true)
  })

  test('100k keys touched once, two minutes later: no state left', () => {
    const limiter = new SlidingWindowLog(60)
    for (let i = 0; i < 100_000; i++) hit(limiter, `token-${i}`, T0 + (i % 1000))
    expect(limiter.size).toBe(100_000)
    limiter.peek('someone', T0 + 120_000) // any request sweeps once a window has passed
    expect(limiter.size).toBe(0)
  })

  test('matches a plain model (filter the live times on every call) over a long random stream with releases', () => {
    // Long enough, and with a limit large enough, that expired times pile up at the front and the
    // kept array is compacted many times over.
    const limit = 300
    const windowMs = 1000
    const limiter = new SlidingWindowLog(limit, windowMs)
    let model: number[] = []
    const modelState = (now: number) => {
      model = model.filter((t) => t > now - windowMs)
      const count = model.length
      const allowed = count < limit
      return {
        allowed,
        limit,
        remaining: Math.max(0, limit - count),
        resetSeconds: count === 0 ? 0 : Math.ceil((model[count - 1]! + windowMs - now) / 1000),
        retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((model[count - limit]! + windowMs - now) / 1000)),
      }
    }
    const random = new Random('limiter-model') // seeded: a failure can be replayed
    let now = T0
    let released = 0
    for (let i = 0; i < 40_000; i++) {
      now += random.int(0, 6)
      const peeked = limiter.peek('k', now)
      expect(peeked).toEqual(modelState(now))
      if (!peeked.allowed) continue
      model.push(now)
      expect(limiter.record('k', now)).toEqual(modelState(now))
      if (random.chance(0.05)) {
        // As the gate does when the demo quota refuses: the request just counted is taken back.
        limiter.release('k', now)
        model.splice(model.lastIndexOf(now), 1)
        released++
      }
    }
    expect(released).toBeGreaterThan(100)
  })

  test('releasing a time that has already left the window changes nothing', () => {
    const limiter = new SlidingWindowLog(3, 1000)
    hit(limiter, 'k', T0)
    hit(limiter, 'k', T0 + 600)
    hit(limiter, 'k', T0 + 1100) // T0 has left the window
    limiter.release('k', T0)
    expect(limiter.peek('k', T0 + 1200).remaining).toBe(1)
    limiter.release('k', T0 + 1100)
    expect(limiter.peek('k', T0 + 1200).remaining).toBe(2)
  })
})
