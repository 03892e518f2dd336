import type { Clock } from '../clock.ts'
import type { Config } from '../config/config.ts'
import type { ControlStore } from '../control/store.ts'
import { MemoryExportSlots } from './export-slots.ts'
import { MemoryRateLimiter } from './memory-limiter.ts'
import { StoredDemoQuota } from './stored-demo-quota.ts'
import { redisLimits } from './redis/limits.ts'
import type { Limits } from './types.ts'

/**
 * The limits the configuration asks for (docs/operations.md#running-more-than-one-process):
 * - with `REDIS_URL`, the window, the quota and the running exports in that Redis, shared by
 *   every process using it, on Redis's clock;
 * - otherwise the embedded default: the window and the running exports in this process's memory
 *   (the window on `embedded.clock`), the quota in `embedded.store` (control.sqlite).
 */
export function createLimits(
  config: Pick<Config, 'redisUrl' | 'rateLimitPerMinute' | 'demoDailyQuota' | 'exportsPerToken' | 'exportsMax'>,
  embedded: { store: ControlStore; clock: Clock },
): Limits {
  const exports = { perToken: config.exportsPerToken, max: config.exportsMax }
  if (config.redisUrl !== undefined) {
    return redisLimits({ url: config.redisUrl, limit: config.rateLimitPerMinute, dailyQuota: config.demoDailyQuota, exports })
  }
  return {
    limiter: new MemoryRateLimiter({ limit: config.rateLimitPerMinute, clock: embedded.clock }),
    quota: new StoredDemoQuota(embedded.store, config.demoDailyQuota, embedded.clock),
    exportSlots: new MemoryExportSlots(exports),
  }
}
