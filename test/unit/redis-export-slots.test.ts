import { describe, expect, test } from 'bun:test'
import { RedisConnection } from '../../src/limits/redis/connection.ts'
import { RedisExportSlots } from '../../src/limits/redis/export-slots.ts'
import { CLAIM_EXPORT_SCRIPT, RELEASE_EXPORT_SCRIPT } from '../../src/limits/redis/scripts.ts'
import { claimSoon, exportSlotsSuite, refusal } from '../support/export-slots-suite.ts'
import { redisForFile } from '../support/redis-server.ts'
import { eventually } from '../support/raw-http.ts'

/**
 * The Redis engine of the running exports against a real redis-server: the shared suite, and
 * what only a shared engine has to get right (several processes, a holder that dies). Redis
 * keeps its own clock: expiry is tested with a short hold and real time, waiting on conditions.
 */
const redis = redisForFile()
const available = redis.available

let prefixes = 0
const freshPrefix = () => `s${++prefixes}:`
const opened: RedisConnection[] = []
const connect = () => {
  const connection = new RedisConnection(redis.url)
  opened.push(connection)
  return connection
}
/** Redis's clock, in ms. */
const redisNow = () => {
  const [seconds, micros] = redis.cli('TIME').split('\n')
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
}

describe.skipIf(!available)('Redis export slots', () => {
  exportSlotsSuite('RedisExportSlots', {
    create: async (limits) => new RedisExportSlots(connect(), { ...limits, keyPrefix: freshPrefix() }),
    cleanUp: async () => {
      for (const connection of opened.splice(0)) connection.close()
    },
  })

  test('two processes (two connections) sharing one Redis share one per-token limit and one global limit', async () => {
    const keyPrefix = freshPrefix()
    const one = new RedisExportSlots(connect(), { perToken: 2, max: 3, keyPrefix })
    const two = new RedisExportSlots(connect(), { perToken: 2, max: 3, keyPrefix })
    await one.claim('a')
    await two.claim('a')
    expect((await refusal(one.claim('a'))).message).toContain('already runs 2 exports')
    expect((await refusal(two.claim('a'))).message).toContain('already runs 2 exports')
    await two.claim('b')
    expect((await refusal(one.claim('c'))).message).toContain('The server already runs 3 exports')
  })

  test("a holder refreshes its slot while it runs; a dead holder's slot expires and is claimed again", async () => {
    const keyPrefix = freshPrefix()
    const tokenKey = `${keyPrefix}exports:token:a`
    const options = { perToken: 2, max: 10, keyPrefix, holdMs: 400, refreshEveryMs: 50 }
    const dyingConnection = connect()
    const alive = new RedisExportSlots(connect(), options)
    const dying = new RedisExportSlots(dyingConnection, options)
    const other = new RedisExportSlots(connect(), options)
    const aliveGiveBack = await alive.claim('a')
    await dying.claim('a')
    const firstExpiries = redis.cli('ZRANGE', tokenKey, '0', '-1', 'WITHSCORES').split('\n').filter((_, i) => i % 2 === 1).map(Number)
    // Past both first expiries on Redis's clock the live holders still hold theirs: refreshed.
    await eventually(() => redisNow() > Math.max(...firstExpiries) + 50, 5000, "Redis's clock past the first expiries")
    expect((await refusal(other.claim('a'))).errorCode).toBe('too_many_exports')
    // One holder dies (its connection gone, as with a killed worker): nothing refreshes its slot,
    // and a claim after its expiry drops it and takes the slot, while the live holder (which
    // keeps the keys from expiring as a whole) keeps its own.
    dyingConnection.close()
    const taken = await claimSoon(other, 'a', 3000)
    expect(redis.cli('ZCARD', tokenKey)).toBe('2')
    expect(redis.cli('ZCARD', `${keyPrefix}exports:all`)).toBe('2')
    expect((await refusal(other.claim('a'))).errorCode).toBe('too_many_exports')
    taken()
    aliveGiveBack()
    await eventually(() => redis.cli('EXISTS', tokenKey, `${keyPrefix}exports:all`) === '0', 5000, 'the emptied keys to go')
  })

  test('a key expires with its latest member: the slots of a process that died leave nothing for ever', async () => {
    const keyPrefix = freshPrefix()
    const connection = connect()
    await new RedisExportSlots(connection, { perToken: 2, max: 10, keyPrefix, holdMs: 300, refreshEveryMs: 100 }).claim('a')
    connection.close()
    expect(Number(redis.cli('PTTL', `${keyPrefix}exports:token:a`))).toBeGreaterThan(0)
    await eventually(() => redis.cli('EXISTS', `${keyPrefix}exports:token:a`, `${keyPrefix}exports:all`) === '0', 5000, 'the keys to expire')
  })

  test('a claim Redis runs after its deadline takes nothing; a give-back has no deadline', () => {
    const past = '1000' // 1970
    expect(redis.cli('EVAL', CLAIM_EXPORT_SCRIPT.source, '2', 'late:t', 'late:all', 'n1', past, '2', '10', '30000', 'm1')).toBe('n1\nlate')
    expect(redis.cli('EXISTS', 'late:t', 'late:all')).toBe('0')
    const future = String(Date.now() + 60_000)
    expect(redis.cli('EVAL', CLAIM_EXPORT_SCRIPT.source, '2', 'late:t', 'late:all', 'n2', future, '2', '10', '30000', 'm2')).toBe('n2\nok\n1')
    expect(redis.cli('EVAL', RELEASE_EXPORT_SCRIPT.source, '2', 'late:t', 'late:all', 'n3', past, 'm2')).toBe('n3\nreleased')
    expect(redis.cli('EXISTS', 'late:t', 'late:all')).toBe('0')
  })
})
