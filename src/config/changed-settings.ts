import { SETTINGS, type Config } from './config.ts'

/**
 * The settings of `config` that differ from their defaults, by variable name, as the start-up
 * line shows them. Two are never shown as given: a path of the data directory is never logged
 * (docs/operations.md#logs), and a Redis URL may carry a password, so only where it points is.
 */
export function changedSettings(config: Config): Record<string, string | number | boolean> {
  const changed: Record<string, string | number | boolean> = {}
  for (const setting of SETTINGS) {
    const value = config[setting.key]
    if (value === setting.default || value === undefined) continue
    if (setting.env === 'DATA_DIR') changed[setting.env] = 'set'
    else if (setting.env === 'REDIS_URL') changed[setting.env] = redisWhere(String(value))
    else changed[setting.env] = value
  }
  return changed
}

/** `redis://user:password@host:6379/0?x` → `redis://host:6379/0`. */
function redisWhere(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return 'set'
  }
}
