import type { Gate } from './gate.ts'

/** How often each process checks its limits' backend when nothing else does. */
export const LIMITS_PROBE_EVERY_MS = 5000

/**
 * Checks the limits' backend (Gate.limitsReady) every `everyMs`, so that an outage and its end
 * are found, logged and shown in `queue_api_limits_backend_up` within seconds on an idle
 * service too, not at the next request. Returns the function that stops it.
 */
export function probeLimits(gate: Pick<Gate, 'limitsReady'>, everyMs: number = LIMITS_PROBE_EVERY_MS): () => void {
  let running = false
  const timer = setInterval(() => {
    // A probe waits for at most Redis's timeouts; one at a time all the same.
    if (running) return
    running = true
    void gate.limitsReady().finally(() => (running = false))
  }, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
