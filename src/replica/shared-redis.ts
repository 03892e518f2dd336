/**
 * Whether a REDIS_URL names this machine (a loopback address, localhost, a Unix socket). On a
 * replica (READ_ONLY=1) that is almost always a mistake: replicas on separate machines would
 * each count in their own Redis, so a token could make N times its limit. It may be right (a
 * local proxy or tunnel to the shared Redis), so it is a warning at start, not a refusal.
 */
export function isLoopbackRedis(url: string): boolean {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return false
  }
  if (parsed.protocol.includes('unix')) return true
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1' || host === '0.0.0.0'
}
