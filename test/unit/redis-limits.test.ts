import { describe, expect, test } from 'bun:test'
import { ManualClock } from '../../src/clock.ts'
import { MemoryRateLimiter } from '../../src/limits/memory-limiter.ts'
import { rateLimitHeaders } from '../../src/limits/state.ts'
import type { WindowDecision, WindowState } from '../../src/limits/types.ts'
import { RedisConnection, redisScript, type ScriptRunner } from '../../src/limits/redis/connection.ts'
import { RedisRateLimiter } from '../../src/limits/redis/rate-limiter.ts'
import { RedisDemoQuota } from '../../src/limits/redis/demo-quota.ts'
import { WINDOW_SCRIPT } from '../../src/limits/redis/scripts.ts'
import { limiterSuite, quotaSuite } from '../support/limits-suite.ts'
import { redisForFile, startRedis } from '../support/redis-server.ts'
import { connect as tcpConnect, createServer, type Socket } from 'node:net'

/**
 * The Redis limits against a real redis-server. Redis keeps its own clock, which no fake can
 * move: the window is tested with a short window (1–1.5 s) and real time.
 */
const redis = redisForFile()
const available = redis.available

let prefixes = 0
/** A key prefix of its own per limiter, so that tests sharing the server share no key. */
const freshPrefix = () => `t${++prefixes}:`
const connect = (options?: ConstructorParameters<typeof RedisConnection>[1]) => new RedisConnection(redis.url, options)

describe.skipIf(!available)('Redis limits', () => {
  limiterSuite('RedisRateLimiter', {
    windowMs: 1000,
    create: async ({ limit, windowMs }) => new RedisRateLimiter(connect(), { limit, windowMs, keyPrefix: freshPrefix() }),
    // Redis's clock counts whole milliseconds: a little more than the window has surely passed for it.
    pass: (ms) => Bun.sleep(ms + 10),
  })

  quotaSuite('RedisDemoQuota', {
    create: async ({ limit }) => new RedisDemoQuota(connect(), { limit, keyPrefix: freshPrefix() }),
  })

  test('the same sequence of requests gives the same headers as the in-memory default', async () => {
    // The in-memory limiter's clock is set, before each step, to the time Redis's script read.
    const connection = connect()
    let redisNow = 0
    const runner: ScriptRunner = {
      run: async (script, keys, args) => {
        const reply = await connection.run(script, keys, args)
        redisNow = Number(reply[2])
        return reply
      },
      ping: () => connection.ping(),
      close: () => connection.close(),
    }
    const windowMs = 1500 // not whole seconds: the rounding up of Reset and Retry-After shows
    const shared = new RedisRateLimiter(runner, { limit: 3, windowMs, keyPrefix: freshPrefix() })
    const clock = new ManualClock()
    const embedded = new MemoryRateLimiter({ limit: 3, windowMs, clock })
    const held: { shared: WindowDecision; embedded: WindowDecision }[] = []
    const compare = (a: WindowState, b: WindowState) => {
      expect(a).toEqual(b)
      expect(rateLimitHeaders(a, shared.windowSeconds)).toEqual(rateLimitHeaders(b, embedded.windowSeconds))
    }
    const consume = async () => {
      const a = await shared.consume('k')
      clock.set(redisNow)
      const b = await embedded.consume('k')
      compare(a.state, b.state)
      expect(Boolean(a.release)).toBe(Boolean(b.release))
      held.push({ shared: a, embedded: b })
      return a.state
    }
    const release = async (index: number) => {
      const a = await held[index]!.shared.release!()
      clock.set(redisNow)
      compare(a, await held[index]!.embedded.release!())
    }
    const peek = async () => {
      const a = await shared.peek('k')
      clock.set(redisNow)
      compare(a, await embedded.peek('k'))
      return a
    }

    expect(await peek()).toMatchObject({ remaining: 3, resetSeconds: 0 })
    await consume()
    await Bun.sleep(300)
    await consume()
    await consume()
    // Refused, Retry-After rounded up from ~1.2 s (the exact values are the in-memory default's, compared above).
    expect(await consume()).toMatchObject({ allowed: false })
    await release(1) // the middle one leaves; the window has room again
    expect((await consume()).allowed).toBe(true)
    await Bun.sleep(700)
    expect(await consume()).toMatchObject({ allowed: false }) // the first leaves in ~0.5 s
    await Bun.sleep(600) // the first has left
    expect((await consume()).allowed).toBe(true)
    await peek()
    await Bun.sleep(1600) // everything has left
    expect(await peek()).toMatchObject({ remaining: 3, resetSeconds: 0 })
    await shared.close()
  })

  test('one sorted set per token: a member per request, the key expiring with its newest request, a release removing exactly its own', async () => {
    const prefix = freshPrefix()
    const limiter = new RedisRateLimiter(connect(), { limit: 5, windowMs: 60_000, keyPrefix: prefix })
    const key = `${prefix}window:tok_1`
    const first = await limiter.consume('tok_1')
    const second = await limiter.consume('tok_1')
    const members = redis.cli('ZRANGE', key, '0', '-1').split('\n')
    expect(members).toHaveLength(2)
    const ttl = Number(redis.cli('PTTL', key))
    expect(ttl).toBeGreaterThan(55_000)
    expect(ttl).toBeLessThanOrEqual(60_000)
    await first.release!()
    expect(redis.cli('ZRANGE', key, '0', '-1').split('\n')).toEqual([members[1]!])
    await second.release!()
    expect(redis.cli('EXISTS', key)).toBe('0') // an empty window leaves no key behind
    await limiter.close()
  })

  test("the demo quota: one counter per organisation per UTC day of Redis's clock, kept 31 days after the day's end", async () => {
    const prefix = freshPrefix()
    const quota = new RedisDemoQuota(connect(), { limit: 2, keyPrefix: prefix })
    const state = await quota.consume('org_1')
    const [seconds] = redis.cli('TIME').split('\n').map(Number) as [number]
    const day = Math.floor(seconds / 86_400)
    const key = `${prefix}quota:org_1:${day}`
    expect(redis.cli('GET', key)).toBe('1')
    // Redis's clock stepped ahead by up to 31 days and put right finds the day's count again.
    expect(Number(redis.cli('EXPIRETIME', key))).toBe((day + 32) * 86_400)
    expect(state.resetAt).toBe(new Date((day + 1) * 86_400_000).toISOString())
    await quota.consume('org_1')
    expect((await quota.consume('org_1')).allowed).toBe(false)
    expect(redis.cli('GET', key)).toBe('2') // the refused request was given back
    await quota.close()
  })

  test('a Redis that lost its scripts (restart, SCRIPT FLUSH) is sent the script again', async () => {
    const limiter = new RedisRateLimiter(connect(), { limit: 5, keyPrefix: freshPrefix() })
    await limiter.consume('k')
    expect(redis.cli('SCRIPT', 'EXISTS', WINDOW_SCRIPT.sha)).toBe('1')
    redis.cli('SCRIPT', 'FLUSH')
    expect(redis.cli('SCRIPT', 'EXISTS', WINDOW_SCRIPT.sha)).toBe('0')
    expect((await limiter.consume('k')).state.remaining).toBe(3)
    expect(redis.cli('SCRIPT', 'EXISTS', WINDOW_SCRIPT.sha)).toBe('1')
    await limiter.close()
  })

  test('a reply that does not carry the call’s nonce fails the call (a reply meant for another command)', async () => {
    const connection = connect()
    await expect(connection.run(redisScript("return {'someone else', 1}"), [], [])).rejects.toThrow('another command')
    expect(await connection.run(redisScript('return {ARGV[1], 7}'), [], [])).toEqual([7])
    connection.close()
  })

  test('an error reply (a key of the wrong type) fails the call', async () => {
    const prefix = freshPrefix()
    redis.cli('SET', `${prefix}window:k`, 'not a sorted set')
    const limiter = new RedisRateLimiter(connect(), { limit: 5, keyPrefix: prefix })
    await expect(limiter.consume('k')).rejects.toThrow('WRONGTYPE')
    expect((await limiter.consume('other')).state.allowed).toBe(true) // the connection is still good
    await limiter.close()
  })

  test('nothing listening: every call fails at once, and once Redis listens calls succeed', async () => {
    const other = await startRedis()
    await other.kill()
    const connection = new RedisConnection(other.url, { retryDelayMs: 50 })
    const limiter = new RedisRateLimiter(connection, { limit: 5, keyPrefix: freshPrefix() })
    const started = Date.now()
    await expect(limiter.consume('k')).rejects.toThrow('cannot connect to Redis')
    await expect(limiter.ping()).rejects.toThrow()
    expect(Date.now() - started).toBeLessThan(1000)
    await other.start()
    await Bun.sleep(60) // past the retry delay
    await limiter.ping()
    expect((await limiter.consume('k')).state.remaining).toBe(4)
    await limiter.close()
    await other.stop()
  })

  test("the retry delay after a failed connection runs on the clock's monotonic time", async () => {
    const other = await startRedis()
    await other.kill()
    const clock = new ManualClock()
    // An hour: only the manual clock can end it within the test.
    const limiter = new RedisRateLimiter(new RedisConnection(other.url, { retryDelayMs: 3_600_000, clock }), { limit: 5, keyPrefix: freshPrefix() })
    await expect(limiter.ping()).rejects.toThrow('cannot connect to Redis')
    await other.start()
    // Within the delay: refused at once, without trying the server that is now there.
    await expect(limiter.ping()).rejects.toThrow('cannot connect to Redis')
    clock.jump(-86_400_000) // a wall clock stepped back changes nothing
    await expect(limiter.ping()).rejects.toThrow('cannot connect to Redis')
    clock.advance(3_600_001)
    await limiter.ping()
    await limiter.close()
    await other.stop()
  })

  test('a connection that went silent (dropped by the network, still open here) is replaced after a timeout', async () => {
    const proxy = await silenceableProxy(redis.port)
    const limiter = new RedisRateLimiter(new RedisConnection(proxy.url, { commandTimeoutMs: 300 }), { limit: 100, keyPrefix: freshPrefix() })
    await limiter.consume('k')
    proxy.silenceOpenConnections()
    await expect(limiter.consume('k')).rejects.toThrow('did not answer')
    // The next call opens a new connection, which the network carries.
    expect((await limiter.consume('k')).state.remaining).toBe(98)
    await limiter.close()
    proxy.close()
  })

  test('a Redis that accepts and answers nothing: calls fail within the command timeout, and recover when it answers again', async () => {
    const limiter = new RedisRateLimiter(connect({ commandTimeoutMs: 300, connectTimeoutMs: 300 }), { limit: 100, keyPrefix: freshPrefix() })
    await limiter.consume('k')
    redis.pause()
    try {
      const started = Date.now()
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => limiter.consume('k')))
      expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true)
      expect(Date.now() - started).toBeLessThan(1500)
      // While it is frozen, a new connection cannot be opened either: still bounded.
      const again = Date.now()
      await expect(limiter.consume('k')).rejects.toThrow()
      expect(Date.now() - again).toBeLessThan(1000)
    } finally {
      redis.resume()
    }
    await Bun.sleep(150)
    expect((await limiter.consume('k')).state.allowed).toBe(true)
    await limiter.close()
  })

  test('after a connection attempt failed, calls are refused at once for the retry delay instead of each waiting for a dead server', async () => {
    const limiter = new RedisRateLimiter(connect({ connectTimeoutMs: 300, retryDelayMs: 800 }), { limit: 100, keyPrefix: freshPrefix() })
    redis.pause()
    try {
      const first = Date.now()
      await expect(limiter.consume('k')).rejects.toThrow('cannot connect to Redis')
      expect(Date.now() - first).toBeGreaterThanOrEqual(250) // waited for the connect timeout
      const next = Date.now()
      await expect(limiter.consume('k')).rejects.toThrow('cannot connect to Redis')
      expect(Date.now() - next).toBeLessThan(100)
    } finally {
      redis.resume()
    }
    await Bun.sleep(800) // past the retry delay: the next call connects
    expect((await limiter.consume('k')).state.allowed).toBe(true)
    await limiter.close()
  })
})

/**
 * A TCP proxy to Redis that can stop carrying the connections open at that moment without
 * closing them (as a network that drops a flow does), while new connections go through.
 */
async function silenceableProxy(port: number) {
  const open = new Set<{ client: Socket; upstream: Socket; silent: boolean }>()
  const server = createServer((client) => {
    const upstream = tcpConnect(port, '127.0.0.1')
    const pair = { client, upstream, silent: false }
    open.add(pair)
    client.on('data', (chunk) => pair.silent || upstream.write(chunk))
    upstream.on('data', (chunk) => pair.silent || client.write(chunk))
    const end = () => {
      open.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    silenceOpenConnections: () => open.forEach((pair) => (pair.silent = true)),
    close: () => {
      server.close()
      open.forEach((pair) => {
        pair.client.destroy()
        pair.upstream.destroy()
      })
    },
  }
}
