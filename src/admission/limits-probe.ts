import type { Gate } from './gate.ts'

/** How often each process checks its limits' backend when nothing else does. */
export const LIMITS_PROBE_EVERY_MS = 5000

/**
 * Checks the limits' backend (Gate.limitsReady) every `everyMs`, so that an outage and its end
 * are found, logged and shown in `queue_api_limits_backend_up` within seconds on an idle
 * service too, not at the next request. Returns the function that stops it; it resolves once
 * a check under way has ended, so that closing the limits after it cannot fail that check.
 */
export function probeLimits(gate: Pick<Gate, 'limitsReady'>, everyMs: number = LIMITS_PROBE_EVERY_MS): () => Promise<void> {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    // A check waits for at most Redis's timeouts; one at a time all the same.
    running ??= gate.limitsReady().finally(() => (running = undefined))
  }, everyMs)
  timer.unref()
  return async () => {
    clearInterval(timer)
    await running
  }
}
