import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { redisAvailable, startRedis, type RedisServer } from '../support/redis-server.ts'

/**
 * A Redis that refuses the login (a real redis-server with `requirepass`): the limits fail
 * closed, and the log says authentication, never the password
 * (docs/operations.md#what-fail-closed-means-for-users).
 */
const PASSWORD = 'correct-horse-battery-9f3a'
const WRONG = 'wrong-password-7c1e'

describe.skipIf(!redisAvailable())('Redis refusing the login', () => {
  let redis: RedisServer
  const servers: TestServer[] = []
  beforeAll(async () => {
    redis = await startRedis()
    redis.cli('CONFIG', 'SET', 'requirepass', PASSWORD)
  })
  afterAll(async () => {
    for (const server of servers) await server.close()
    await redis?.stop()
  })

  /** The reason of the one outage line a server with REDIS_URL `url` logs for a request. */
  const outageReason = async (url: string) => {
    const server = await startServer({ redisUrl: url }, { limitsProbeEveryMs: 60_000 })
    servers.push(server)
    const response = await server.get('/v1/queues', server.seeded().token)
    expect(response.status).toBe(503)
    expect(((await response.json()) as { error: string }).error).toBe('limits_unavailable')
    const lines = server.logger.lines.filter((line) => line.includes('"event":"limits_unavailable"'))
    expect(lines).toHaveLength(1)
    for (const secret of [PASSWORD, WRONG]) expect(server.logger.lines.join('\n')).not.toContain(secret)
    return (JSON.parse(lines[0]!) as { error: string }).error
  }

  test('a wrong password: authentication failed (WRONGPASS)', async () => {
    expect(await outageReason(`redis://:${WRONG}@127.0.0.1:${redis.port}`)).toContain('authentication failed: Redis refused the user name or password of REDIS_URL (WRONGPASS)')
  })

  test('a wrong user name and password (ACL): authentication failed (WRONGPASS)', async () => {
    expect(await outageReason(`redis://someone:${WRONG}@127.0.0.1:${redis.port}`)).toContain('(WRONGPASS)')
  })

  test('no password in REDIS_URL: authentication required (NOAUTH)', async () => {
    expect(await outageReason(`redis://127.0.0.1:${redis.port}`)).toContain('authentication required: Redis asks for a password and REDIS_URL gives none (NOAUTH)')
  })

  test('the right password: served', async () => {
    const server = await startServer({ redisUrl: `redis://:${PASSWORD}@127.0.0.1:${redis.port}` })
    servers.push(server)
    expect((await server.get('/v1/queues', server.seeded().token)).status).toBe(200)
  })

  test('Redis gone (nothing listens): still "cannot connect", not authentication', async () => {
    const server = await startServer({ redisUrl: `redis://:${WRONG}@127.0.0.1:1` }, { limitsProbeEveryMs: 60_000 })
    servers.push(server)
    expect((await server.get('/v1/queues', server.seeded().token)).status).toBe(503)
    const line = server.logger.lines.find((candidate) => candidate.includes('"event":"limits_unavailable"'))!
    expect(line).toContain('cannot connect to Redis')
    expect(line).not.toContain('authentication')
  })
})
