import { afterAll, describe, expect, test } from 'bun:test'
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

quotaSuite('StoredDemoQuota', {
  create: async ({ limit }) => {
    // A data directory of its own per quota, so that counts of one test do not reach the next.
    const { store, idOf } = storeWithOrganisations(`${temp.dir}/${++stores}`)
    const quota = new StoredDemoQuota(store, limit, clock)
    return {
      backend: quota.backend,
      consume: (name) => quota.consume(idOf(name)),
      peek: (name) => quota.peek(idOf(name)),
      ping: () => quota.ping(),
      close: async () => store.close(),
    }
  },
})

describe('StoredDemoQuota', () => {
  test("a day's counters are pruned on the first request of a later day", async () => {
    const { store, idOf } = storeWithOrganisations(`${temp.dir}/prune`)
    const dayClock = new ManualClock(Date.parse('2026-03-10T23:59:59.000Z'))
    const quota = new StoredDemoQuota(store, 5, dayClock)
    await quota.consume(idOf('a'))
    await quota.consume(idOf('b'))
    const rows = () => store.db.query('SELECT organisation_id, day, count FROM demo_quota_usage ORDER BY day, organisation_id').all()
    expect(rows()).toHaveLength(2)
    dayClock.advance(2000)
    expect(await quota.consume(idOf('a'))).toMatchObject({ allowed: true, remaining: 4, resetAt: '2026-03-12T00:00:00.000Z' })
    expect(rows()).toEqual([{ organisation_id: idOf('a'), day: '2026-03-11', count: 1 }])
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
})
