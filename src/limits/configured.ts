import type { Clock } from '../clock.ts'
import type { Config } from '../config/config.ts'
import type { ControlStore } from '../control/store.ts'
import { embeddedLimits, type Limits } from './embedded.ts'
import { redisLimits } from './redis/limits.ts'

/** The limits the configuration asks for: in Redis when REDIS_URL is set, the embedded default otherwise. */
export function configuredLimits(config: Config): (store: ControlStore, clock: Clock) => Limits {
  const { redisUrl } = config
  if (redisUrl === undefined) return (store, clock) => embeddedLimits(config, store, clock)
  return () => redisLimits({ url: redisUrl, limit: config.rateLimitPerMinute, dailyQuota: config.demoDailyQuota })
}
