import { afterEach, describe, expect, test } from 'bun:test'
import type { DemoQuota, RateLimiter } from '../../src/limits/types.ts'

/**
 * The behaviour every implementation of the limits seam must show (src/limits/types.ts:
 * RateLimiter and DemoQuota): each implementation's test file calls these with a harness that
 * builds it. Time is the harness's: a fake clock for the embedded default, real time with a
 * short window for an engine that keeps its own clock.
 */

export interface LimiterHarness {
  create(options: { limit: number; windowMs: number }): Promise<RateLimiter>
  /** Lets `ms` pass as the limiter sees time. */
  pass(ms: number): Promise<void>
  /** A window short enough that `pass(windowMs)` is cheap for this harness. */
  windowMs: number
}

export function limiterSuite(name: string, harness: LimiterHarness) {
  describe(`${name}: the RateLimiter seam`, () => {
    const opened: RateLimiter[] = []
    const create = async (limit: number) => {
      const limiter = await harness.create({ limit, windowMs: harness.windowMs })
      opened.push(limiter)
      return limiter
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((limiter) => limiter.close()))
    })
    const windowSeconds = Math.ceil(harness.windowMs / 1000)

    test('counts down to the limit, then refuses with Retry-After within the window', async () => {
      const limiter = await create(3)
      for (const remaining of [2, 1, 0]) {
        const { state, release } = await limiter.consume('k')
        expect(state).toMatchObject({ allowed: true, limit: 3, remaining, retryAfterSeconds: 0 })
        expect(release).toBeFunction()
      }
      const refused = await limiter.consume('k')
      expect(refused.release).toBeUndefined()
      expect(refused.state).toMatchObject({ allowed: false, limit: 3, remaining: 0 })
      expect(refused.state.retryAfterSeconds).toBeGreaterThanOrEqual(1)
      expect(refused.state.retryAfterSeconds).toBeLessThanOrEqual(windowSeconds)
    })

    test('a refused request counts nothing: after the window the full limit is back', async () => {
      const limiter = await create(2)
      for (let i = 0; i < 5; i++) await limiter.consume('k')
      await harness.pass(harness.windowMs)
      expect(await limiter.peek('k')).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 0 })
      expect((await limiter.consume('k')).state.remaining).toBe(1)
    })

    test('peek counts nothing; reset is the whole seconds until the window is empty', async () => {
      const limiter = await create(5)
      expect(await limiter.peek('k')).toEqual({ allowed: true, limit: 5, remaining: 5, resetSeconds: 0, retryAfterSeconds: 0 })
      expect(await limiter.peek('k')).toMatchObject({ remaining: 5 })
      const { state } = await limiter.consume('k')
      expect(state.resetSeconds).toBeGreaterThanOrEqual(1)
      expect(state.resetSeconds).toBeLessThanOrEqual(windowSeconds)
      expect(await limiter.peek('k')).toMatchObject({ remaining: 4 })
    })

    test('release takes back exactly that request, once', async () => {
      const limiter = await create(3)
      await limiter.consume('k')
      const second = await limiter.consume('k')
      const after = await second.release!()
      expect(after).toMatchObject({ allowed: true, remaining: 2 })
      expect(await second.release!()).toMatchObject({ remaining: 2 }) // a second call gives nothing more back
      expect((await limiter.peek('k')).remaining).toBe(2)
    })

    test('two requests in the same instant are two entries: releasing one keeps the other', async () => {
      const limiter = await create(4)
      const [a, b] = await Promise.all([limiter.consume('k'), limiter.consume('k')])
      await a.release!()
      expect((await limiter.peek('k')).remaining).toBe(3)
      await b.release!()
      expect((await limiter.peek('k')).remaining).toBe(4)
    })

    test('keys are independent', async () => {
      const limiter = await create(1)
      expect((await limiter.consume('a')).state.allowed).toBe(true)
      expect((await limiter.consume('a')).state.allowed).toBe(false)
      expect((await limiter.consume('b')).state.allowed).toBe(true)
    })

    test('a concurrent burst cannot overfill the window', async () => {
      const limiter = await create(10)
      const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume('burst')))
      expect(decisions.filter((d) => d.state.allowed)).toHaveLength(10)
      expect(decisions.map((d) => d.state.remaining).filter((r, i) => decisions[i]!.state.allowed).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    })

    test('ping resolves while the limiter can serve', async () => {
      const limiter = await create(1)
      await limiter.ping()
    })
  })
}

export interface QuotaHarness {
  create(options: { limit: number }): Promise<DemoQuota>
}

export function quotaSuite(name: string, harness: QuotaHarness) {
  describe(`${name}: the DemoQuota seam`, () => {
    const opened: DemoQuota[] = []
    const create = async (limit: number) => {
      const quota = await harness.create({ limit })
      opened.push(quota)
      return quota
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((quota) => quota.close()))
    })

    test('counts down to the limit, then refuses; resetAt is the next UTC midnight', async () => {
      const quota = await create(2)
      expect(await quota.consume('org')).toMatchObject({ allowed: true, limit: 2, remaining: 1 })
      expect(await quota.consume('org')).toMatchObject({ allowed: true, remaining: 0 })
      const refused = await quota.consume('org')
      expect(refused).toMatchObject({ allowed: false, limit: 2, remaining: 0 })
      expect(refused.resetAt).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/)
      const untilReset = Date.parse(refused.resetAt) - Date.now()
      expect(refused.resetSeconds).toBeGreaterThanOrEqual(1)
      expect(refused.resetSeconds).toBeLessThanOrEqual(86_400)
      // The harness's clock may be fake: only check agreement when it follows real time.
      if (Math.abs(untilReset) <= 86_400_000) expect(Math.abs(refused.resetSeconds - untilReset / 1000)).toBeLessThan(5)
    })

    test('a refused request consumes nothing; peek counts nothing', async () => {
      const quota = await create(1)
      await quota.consume('org')
      for (let i = 0; i < 3; i++) expect((await quota.consume('org')).allowed).toBe(false)
      expect(await quota.peek('org')).toMatchObject({ allowed: false, remaining: 0 })
      expect(await quota.peek('other')).toMatchObject({ allowed: true, remaining: 1 })
      expect(await quota.peek('other')).toMatchObject({ remaining: 1 })
    })

    test('organisations are independent', async () => {
      const quota = await create(1)
      expect((await quota.consume('a')).allowed).toBe(true)
      expect((await quota.consume('b')).allowed).toBe(true)
      expect((await quota.consume('a')).allowed).toBe(false)
    })

    test('release takes one counted request back, on its day, never below zero', async () => {
      const quota = await create(2)
      const first = await quota.consume('org')
      await quota.consume('org')
      expect((await quota.consume('org')).allowed).toBe(false)
      expect(await quota.release('org', first)).toMatchObject({ allowed: true, remaining: 1, resetAt: first.resetAt })
      expect(await quota.peek('org')).toMatchObject({ remaining: 1 })
      expect((await quota.consume('org')).allowed).toBe(true)
      await quota.release('other', first)
      expect(await quota.peek('other')).toMatchObject({ remaining: 2 })
    })

    test('concurrent releases and consumes keep the count exact', async () => {
      const quota = await create(10)
      const counted = await Promise.all(Array.from({ length: 10 }, () => quota.consume('org')))
      const [, consumed] = await Promise.all([Promise.all(counted.slice(0, 6).map((state) => quota.release('org', state))), Promise.all(Array.from({ length: 4 }, () => quota.consume('org')))])
      const allowed = consumed.filter((state) => state.allowed).length
      expect(await quota.peek('org')).toMatchObject({ remaining: 6 - allowed })
    })

    test('a concurrent burst cannot overfill the day', async () => {
      const quota = await create(7)
      const states = await Promise.all(Array.from({ length: 30 }, () => quota.consume('burst')))
      expect(states.filter((s) => s.allowed)).toHaveLength(7)
      expect(await quota.peek('burst')).toMatchObject({ remaining: 0 })
    })
  })
}
