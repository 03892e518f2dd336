import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisConnection } from '../../src/limits/redis/connection.ts'
import { RedisExportSlots } from '../../src/limits/redis/export-slots.ts'
import { CLAIM_EXPORT_SCRIPT, RELEASE_EXPORT_SCRIPT } from '../../src/limits/redis/scripts.ts'
import { claimSoon, exportSlotsSuite, refusal } from '../support/export-slots-suite.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { eventually } from '../support/raw-http.ts'

/**
 * The Redis engine of the running exports against a real redis-server: the shared suite, and
 * what only a shared engine has to get right (several processes, a holder that dies). Redis
 * keeps its own clock: expiry is tested with a short hold and real time, waiting on conditions.
 */
const available = redisAvailable()
let redis: RedisServer
beforeAll(async () => {
  if (available) redis = await startRedis()
})
afterAll(async () => {
  await redis?.stop()
})

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
    const holdMs = 400
    const holder = connect()
    const alive = new RedisExportSlots(holder, { perToken: 1, max: 10, keyPrefix, holdMs, refreshEveryMs: 50 })
    const other = new RedisExportSlots(connect(), { perToken: 1, max: 10, keyPrefix, holdMs })
    await alive.claim('a')
    const firstExpiry = Number(redis.cli('ZRANGE', tokenKey, '0', '0', 'WITHSCORES').split('\n')[1])
    // Past the first expiry on Redis's clock the live holder still holds it: it was refreshed.
    await eventually(() => redisNow() > firstExpiry + 50, 5000, "Redis's clock past the first expiry")
    expect((await refusal(other.claim('a'))).errorCode).toBe('too_many_exports')
    // The holder dies (its connection gone, as with a killed worker): nothing refreshes the slot,
    // and a claim after its expiry drops it and takes the slot.
    holder.close()
    const taken = await claimSoon(other, 'a', 5000)
    expect(redis.cli('ZCARD', tokenKey)).toBe('1')
    expect(redis.cli('ZCARD', `${keyPrefix}exports:all`)).toBe('1')
    taken()
    // The keys expire with their latest member: nothing is left for ever.
    await eventually(() => redis.cli('EXISTS', tokenKey) === '0', 5000, 'the emptied key to go')
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
