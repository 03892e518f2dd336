import { expect, test } from 'bun:test'
import { isLoopbackRedis } from '../../src/replica/shared-redis.ts'

test('a REDIS_URL naming this machine is told from one naming a shared Redis', () => {
  for (const url of ['redis://127.0.0.1:6379', 'redis://localhost', 'redis://user:pw@127.0.0.2:1/0', 'redis://[::1]:6379', 'redis+unix:///run/redis.sock', 'rediss://LOCALHOST:6380']) expect({ url, loopback: isLoopbackRedis(url) }).toEqual({ url, loopback: true })
  for (const url of ['redis://10.0.0.5:6379', 'rediss://redis.internal:6380', 'redis://[fd00::1]:6379', 'not a url']) expect({ url, loopback: isLoopbackRedis(url) }).toEqual({ url, loopback: false })
})
