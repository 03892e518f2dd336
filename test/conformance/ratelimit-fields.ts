/**
 * Reads the IETF draft's `RateLimit` and `RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers):
 * a list of items such as `"minute";q=60;w=60, "day";q=50;w=86400`. Returns each item's integer
 * parameters by name, or null when the field is absent or not of that form.
 */
export function rateLimitItems(field: string | null): Record<string, Record<string, number>> | null {
  if (field === null) return null
  const items: Record<string, Record<string, number>> = {}
  for (const item of field.split(',')) {
    const [name, ...params] = item.trim().split(';')
    const unquoted = /^"([^"]*)"$/.exec(name ?? '')?.[1]
    if (unquoted === undefined) return null
    items[unquoted] = {}
    for (const param of params) {
      const [key, value] = param.split('=')
      if (!key || value === undefined || !/^\d+$/.test(value)) return null
      items[unquoted][key] = Number(value)
    }
  }
  return items
}

/** Seconds from `now` to the next 00:00:00.000Z, when a demo organisation's day resets. */
export function secondsToUtcMidnight(now: number): number {
  const day = 86_400_000
  return (Math.floor(now / day) * day + day - now) / 1000
}

/** How far apart two second counts on a daily cycle are (23:59:59 and 00:00:01 are 2 s apart). */
export function dailyDistance(a: number, b: number): number {
  const d = Math.abs(a - b) % 86_400
  return Math.min(d, 86_400 - d)
}
