import type { Clock } from '../clock.ts'
import type { Config } from '../config/config.ts'
import type { ControlStore } from '../control/store.ts'
import type { DemoQuota } from './demo-quota.ts'
import { MemoryRateLimiter } from './memory-limiter.ts'
import type { RateLimiter } from './rate-limiter.ts'
import { StoredDemoQuota } from './stored-demo-quota.ts'

export interface Limits {
  limiter: RateLimiter
  quota: DemoQuota
}

/** The embedded default: the minute window in this process, the demo quota in control.sqlite. */
export function embeddedLimits(config: Config, store: ControlStore, clock: Clock): Limits {
  return {
    limiter: new MemoryRateLimiter({ limit: config.rateLimitPerMinute, clock }),
    quota: new StoredDemoQuota(store, config.demoDailyQuota, clock),
  }
}
