import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { ManualClock } from '../../src/clock.ts'
import { ControlStore } from '../../src/control/store.ts'
import { MemoryRateLimiter } from '../../src/limits/memory-limiter.ts'
import { StoredDemoQuota } from '../../src/limits/stored-demo-quota.ts'
import { tempDataDir } from '../support/harness.ts'
import { limiterSuite, quotaSuite } from '../support/limits-suite.ts'

const clock = new ManualClock()
limiterSuite('MemoryRateLimiter', {
  windowMs: 60_000,
  create: async ({ limit, windowMs }) => new MemoryRateLimiter({ limit, windowMs, clock }),
  pass: async (ms) => clock.advance(ms),
})

const temp = tempDataDir()
afterAll(() => temp.cleanup())
let stores = 0
/** A store on a data directory of its own, and a function that names an organisation of it by a short name. */
function storeWithOrganisations(dir: string) {
  const store = new ControlStore(dir)
  const ids = new Map<string, string>()
  const idOf = (name: string) => {
    let id = ids.get(name)
    if (id === undefined) {
      id = store.createOrganisation({ name, slug: name, plan: 'demo', apiEnabled: true, createdAt: new Date(clock.now()).toISOString() }).id
      ids.set(name, id)
    }
    return id
  }
  return { store, idOf }
}

const HOUR = 3_600_000
const DAY = 24 * HOUR

quotaSuite('StoredDemoQuota', {
  create: async ({ limit }) => {
    // A data directory of its own per quota, so that counts of one test do not reach the next.
    const { store, idOf } = storeWithOrganisations(`${temp.dir}/${++stores}`)
    const quota = new StoredDemoQuota(store, limit, clock)
    return {
      backend: quota.backend,
      consume: (name) => quota.consume(idOf(name)),
      peek: (name) => quota.peek(idOf(name)),
      release: (name, counted) => quota.release(idOf(name), counted),
      ping: () => quota.ping(),
      close: async () => store.close(),
    }
  },
})

describe('StoredDemoQuota', () => {
  test("a day's counters are pruned once a later day has been counted on for a day of the process's own time", async () => {
    const { store, idOf } = storeWithOrganisations(`${temp.dir}/prune`)
    const dayClock = new ManualClock(Date.parse('2026-03-10T23:59:59.000Z'))
    const quota = new StoredDemoQuota(store, 5, dayClock)
    const days = () => (store.db.query('SELECT day FROM demo_quota_usage ORDER BY day, organisation_id').all() as { day: string }[]).map((row) => row.day)
    await quota.consume(idOf('a'))
    await quota.consume(idOf('b'))
    dayClock.advance(2000)
    expect(await quota.consume(idOf('a'))).toMatchObject({ allowed: true, remaining: 4, resetAt: '2026-03-12T00:00:00.000Z' })
    dayClock.advance(12 * HOUR)
    await quota.consume(idOf('a'))
    expect(days()).toEqual(['2026-03-10', '2026-03-10', '2026-03-11'])
    // 10 March was last counted on 25 hours ago (of monotonic time): pruned; 11 March is kept.
    dayClock.advance(13 * HOUR)
    await quota.consume(idOf('a'))
    expect(days()).toEqual(['2026-03-11', '2026-03-12'])
    store.close()
  })

  test('a day used up survives a step of the wall clock ahead and back, of any size, and a restart during it', async () => {
    const dir = `${temp.dir}/steps`
    const { store, idOf } = storeWithOrganisations(dir)
    const stepClock = new ManualClock(Date.parse('2026-03-08T12:00:00.000Z'))
    stepClock.advance(2 * DAY) // the process has run two days: only its own memory keeps the day
    const quota = new StoredDemoQuota(store, 3, stepClock)
    const org = idOf('org')
    for (let i = 0; i < 3; i++) expect((await quota.consume(org)).allowed).toBe(true)
    for (const step of [2 * DAY, 400 * DAY]) {
      stepClock.jump(step)
      expect(await quota.consume(org)).toMatchObject({ allowed: true, remaining: 2 }) // the day the wall clock says
      stepClock.jump(-step)
      expect(await quota.consume(org)).toMatchObject({ allowed: false, remaining: 0, resetAt: '2026-03-11T00:00:00.000Z' })
    }
    // Restarted while the wall clock is two days ahead: the new process keeps what it cannot judge.
    stepClock.jump(2 * DAY)
    const restarted = new StoredDemoQuota(store, 3, new ManualClock(stepClock.now()))
    expect((await restarted.consume(org)).allowed).toBe(true)
    stepClock.jump(-2 * DAY)
    const putRight = new StoredDemoQuota(store, 3, new ManualClock(stepClock.now()))
    expect((await putRight.consume(org)).allowed).toBe(false)
    store.close()
  })

  test('the counters are shared by two stores on one data directory (two processes)', async () => {
    const { store: one, idOf } = storeWithOrganisations(`${temp.dir}/shared`)
    const two = new ControlStore(`${temp.dir}/shared`)
    const a = new StoredDemoQuota(one, 3, clock)
    const b = new StoredDemoQuota(two, 3, clock)
    const org = idOf('org')
    await a.consume(org)
    await b.consume(org)
    expect(await a.consume(org)).toMatchObject({ allowed: true, remaining: 0 })
    expect((await b.consume(org)).allowed).toBe(false)
    one.close()
    two.close()
  })

  test("another process's write lock is waited out on the clock's monotonic time, then the busy error is thrown", async () => {
    const { store, idOf } = storeWithOrganisations(`${temp.dir}/locked`)
    const org = idOf('org')
    const waiting = new ControlStore(`${temp.dir}/locked`, { busyTimeoutMs: 1 })
    const lockClock = new ManualClock()
    // A wait of an hour: only the manual clock can end it within the test.
    const quota = new StoredDemoQuota(waiting, 5, lockClock, 3_600_000)
    const holder = new Database(`${temp.dir}/locked/control.sqlite`)
    holder.exec('BEGIN IMMEDIATE')
    const consumed = quota.consume(org)
    await Bun.sleep(30)
    lockClock.advance(3_600_001)
    const error = await consumed.then(() => undefined, (thrown: unknown) => thrown)
    expect((error as { code?: string }).code).toStartWith('SQLITE_BUSY')
    holder.exec('ROLLBACK')
    holder.close()
    expect((await quota.consume(org)).allowed).toBe(true)
    waiting.close()
    store.close()
  })
})
