import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'
import { eventually } from '../support/raw-http.ts'
import { redisLimits } from '../../src/limits/redis/limits.ts'
import { QUOTA_SCRIPT, WINDOW_SCRIPT } from '../../src/limits/redis/scripts.ts'

/**
 * A request refused with 503 limits_unavailable while Redis did not answer never counts, even
 * when Redis runs its command later: a real redis-server is frozen (SIGSTOP) while requests
 * are sent, then thawed (SIGCONT) with their commands still in its socket buffers.
 */
describe.skipIf(!redisAvailable())('requests refused during a Redis stall', () => {
  let redis: RedisServer
  let server: TestServer

  beforeAll(async () => {
    redis = await startRedis()
    server = await startServer({}, {
      limits: () => redisLimits({ url: redis.url, limit: 60, dailyQuota: 50, exports: { perToken: 2, max: 32 }, connection: { commandTimeoutMs: 300, connectTimeoutMs: 300 } }),
    })
  })
  afterAll(async () => {
    await server?.close()
    await redis?.stop()
  })

  test('ten requests answered 503 while Redis is stopped are not in the window once it runs again', async () => {
    const { token } = server.seeded()
    const remaining = async () => {
      const response = await server.get('/v1/queues', token)
      await response.arrayBuffer()
      expect(response.status).toBe(200)
      return response.headers.get('x-ratelimit-remaining')
    }
    expect(await remaining()).toBe('59')
    redis.pause()
    try {
      const refused = await Promise.all(Array.from({ length: 10 }, () => server.get('/v1/queues', token)))
      for (const response of refused) expect(((await response.json()) as { error: string }).error).toBe('limits_unavailable')
    } finally {
      redis.resume()
    }
    await eventually(() => redis.cli('PING') === 'PONG', 5000, 'Redis to answer again')
    // The limits recover (a new connection) within the retry delay; /readyz says when.
    const giveUpAt = Date.now() + 5000
    while ((await server.get('/readyz')).status !== 200) {
      if (Date.now() > giveUpAt) throw new Error('the limits did not recover')
    }
    // Only the counted requests: the first one and these.
    expect(await remaining()).toBe('58')
    expect(await remaining()).toBe('57')
  })

  test('a give-back sent while Redis is stopped takes the request back once Redis runs it', async () => {
    // What a demo organisation's request meets when Redis stalls between its window and its day:
    // the window counted it, the answer is 503, and the window must give it back, late or not.
    const limits = redisLimits({ url: redis.url, limit: 60, dailyQuota: 50, keyPrefix: 'giveback:', exports: { perToken: 2, max: 32 }, connection: { commandTimeoutMs: 300, connectTimeoutMs: 300 } })
    try {
      const decision = await limits.limiter.consume('tok')
      expect(redis.cli('ZCARD', 'giveback:window:tok')).toBe('1')
      redis.pause()
      try {
        await expect(decision.release!()).rejects.toThrow()
      } finally {
        redis.resume()
      }
      await eventually(() => redis.cli('ZCARD', 'giveback:window:tok') === '0', 5000, 'the late give-back to run')
    } finally {
      await limits.limiter.close()
    }
  })

  test('a script run after its deadline changes nothing and says so', () => {
    const past = '1000' // 1970: long gone on any clock
    expect(redis.cli('EVAL', WINDOW_SCRIPT.source, '1', 'late:window', 'n1', past, 'consume', '5', '60000', 'm1')).toBe('n1\nlate')
    expect(redis.cli('EXISTS', 'late:window')).toBe('0')
    expect(redis.cli('EVAL', QUOTA_SCRIPT.source, '1', 'late:quota', 'n2', past, 'consume', '5')).toBe('n2\nlate')
    expect(redis.cli('KEYS', 'late:quota*')).toBe('')
    // In time, the same call counts.
    const future = String(Date.now() + 60_000)
    expect(redis.cli('EVAL', QUOTA_SCRIPT.source, '1', 'late:quota', 'n3', future, 'consume', '5').split('\n').slice(0, 3)).toEqual(['n3', '1', '1'])
  })
})
