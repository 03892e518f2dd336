import type { Limits } from '../types.ts'
import { RedisConnection, type RedisConnectionOptions } from './connection.ts'
import { RedisDemoQuota } from './demo-quota.ts'
import { RedisRateLimiter } from './rate-limiter.ts'

/**
 * The minute window and the demo quota in the Redis at `url`, over one connection (closed by
 * either's close). Nothing is connected here: the first request connects, so a Redis that is
 * down at start-up gives 503 limits_unavailable and a not-ready /readyz, not a failed start.
 */
export function redisLimits(options: { url: string; limit: number; dailyQuota: number; windowMs?: number; keyPrefix?: string; connection?: RedisConnectionOptions }): Limits {
  const redis = new RedisConnection(options.url, options.connection)
  return {
    limiter: new RedisRateLimiter(redis, { limit: options.limit, windowMs: options.windowMs, keyPrefix: options.keyPrefix }),
    quota: new RedisDemoQuota(redis, { limit: options.dailyQuota, keyPrefix: options.keyPrefix }),
  }
}
