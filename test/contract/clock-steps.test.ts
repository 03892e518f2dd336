import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, tempDataDir, type TestServer } from '../support/harness.ts'
import { ManualClock } from '../../src/clock.ts'
import { describeWindow } from '../../src/limits/state.ts'

/**
 * The wall clock is stepped under a running server (ManualClock.jump: no time passes). The
 * minute windows are durations on the monotonic clock and do not move; the demo day follows
 * the wall clock, but never back to a day whose quota was already handed out.
 */

const PAGE = '/v1/tickets?from=2026-03-01&to=2026-03-02'
const HOUR = 3_600_000

async function get(server: TestServer, token: string) {
  const response = await server.get(PAGE, token)
  await response.arrayBuffer()
  const header = (name: string) => response.headers.get(name)
  return { status: response.status, remaining: header('x-ratelimit-remaining'), reset: Number(header('x-ratelimit-reset')), retryAfter: header('retry-after'), current: header('ratelimit') }
}

describe('wall-clock steps and the minute window', () => {
  let server: TestServer
  const clock = new ManualClock(Date.parse('2026-03-10T12:00:00.000Z'))

  beforeAll(async () => {
    server = await startServer({ rateLimitPerMinute: 5 }, { clock })
  })
  afterAll(() => server.close())

  test('a step back of an hour neither locks a token out nor shows a negative reset', async () => {
    const { token } = server.organisation()
    for (let i = 0; i < 3; i++) expect((await get(server, token)).status).toBe(200)
    clock.advance(10_000)
    clock.jump(-HOUR)
    const after = await get(server, token)
    expect(after).toMatchObject({ status: 200, remaining: '1', reset: 60 })
    expect((await get(server, token)).status).toBe(200)
    const refused = await get(server, token)
    expect(refused).toMatchObject({ status: 429, retryAfter: '50' }) // the first request leaves 60 s after it was counted
    clock.advance(50_000)
    expect(await get(server, token)).toMatchObject({ status: 200, remaining: '2' }) // the three first requests left
  })

  test('a step forward of two minutes hands out no new window', async () => {
    const { token } = server.organisation()
    for (let i = 0; i < 5; i++) expect((await get(server, token)).status).toBe(200)
    clock.jump(2 * 60_000)
    const refused = await get(server, token)
    expect(refused).toMatchObject({ status: 429, remaining: '0', reset: 60, retryAfter: '60' })
  })

  test('the headers are never negative, whatever the clock of the engine that counted', () => {
    // An engine on a wall clock that was stepped (Redis's TIME) between counting and trimming:
    // a request still counted although it is older than the window by that clock.
    const state = describeWindow({ limit: 5, windowMs: 60_000, now: 1_000_000, count: 1, newest: 1_000_000 - 2 * 60_000, blocking: undefined })
    expect(state.resetSeconds).toBeGreaterThanOrEqual(0)
  })
})

describe('wall-clock steps and the demo day', () => {
  test('the day follows the wall clock forward, and a step back never hands out a second quota', async () => {
    const clock = new ManualClock(Date.parse('2026-03-10T23:59:00.000Z'))
    const data = tempDataDir()
    let server = await startServer({ demoDailyQuota: 2 }, { clock, dataDir: data.dir })
    try {
      const { token } = server.organisation({ plan: 'demo' })
      expect((await get(server, token)).status).toBe(200)
      expect((await get(server, token)).status).toBe(200)
      expect((await get(server, token)).status).toBe(429) // 10 March is used up
      clock.advance(2 * 60_000) // 00:01 on 11 March: a new day, a new quota
      expect((await get(server, token)).status).toBe(200)
      expect((await get(server, token)).status).toBe(200)
      expect((await get(server, token)).status).toBe(429)

      clock.jump(-HOUR) // the wall clock reads 23:01 on 10 March again
      const refused = await get(server, token)
      expect(refused.status).toBe(429)
      // Still 11 March's quota, which resets when the wall clock reaches 12 March.
      expect(refused.current).toContain(`"day";r=0;t=${(HOUR - 60_000) / 1000 + 86_400}`)
      expect(Number(refused.retryAfter)).toBe((HOUR - 60_000) / 1000 + 86_400)

      // A restart while the wall clock is still behind: the counters say which day was last.
      await server.close()
      server = await startServer({ demoDailyQuota: 2 }, { clock, dataDir: data.dir })
      expect((await get(server, token)).status).toBe(429)
    } finally {
      await server.close()
      data.cleanup()
    }
  })

  test('50 used, the wall clock two days ahead, then put right: no fresh day (the day was not pruned while ahead)', async () => {
    const clock = new ManualClock(Date.parse('2026-03-10T12:00:00.000Z'))
    const server = await startServer({ demoDailyQuota: 50, rateLimitPerMinute: 1000 }, { clock })
    try {
      const { token } = server.organisation({ plan: 'demo' })
      for (let i = 0; i < 50; i++) expect((await get(server, token)).status).toBe(200)
      clock.jump(2 * 86_400_000)
      expect((await get(server, token)).current).toContain('"day";r=49;')
      clock.jump(-2 * 86_400_000)
      const back = await get(server, token)
      expect(back.status).toBe(429)
      expect(back.current).toContain('"day";r=0;t=43200')
    } finally {
      await server.close()
    }
  })

  test('a day counted by a clock set days ahead is not followed once the clock is put right', async () => {
    const clock = new ManualClock(Date.parse('2026-03-10T12:00:00.000Z'))
    const data = tempDataDir()
    let server = await startServer({ demoDailyQuota: 2 }, { clock, dataDir: data.dir })
    try {
      const { token } = server.organisation({ plan: 'demo' })
      clock.jump(30 * 86_400_000) // set wrong: 9 April
      expect((await get(server, token)).status).toBe(200)
      clock.jump(-30 * 86_400_000) // put right: 10 March
      // 10 March's own quota, not what is left of 9 April's until April comes.
      const first = await get(server, token)
      expect(first.status).toBe(200)
      expect(first.current).toContain('"day";r=1;t=43200')
      // And so after a restart, which reads the newest counted day from control.sqlite.
      await server.close()
      server = await startServer({ demoDailyQuota: 2 }, { clock, dataDir: data.dir })
      expect((await get(server, token)).current).toContain('"day";r=0;t=43200')
    } finally {
      await server.close()
      data.cleanup()
    }
  })
})
