import { NetworkError, RateLimitedError, errorFromResponse } from './errors.ts'
import { fetchWithTimeout, TimeoutError } from './timeout.ts'

export interface RetryEvent {
  /** Why the client is waiting: the minute window, a 5xx answer, or no answer at all. */
  reason: 'rate_limited' | 'server_error' | 'network_error'
  /** 1 for the first retry of this request. */
  attempt: number
  waitSeconds: number
  /** The path asked for (no query string: it may hold a changes token). */
  path: string
  status?: number
}

/** The part of `fetch` the client uses (any fetch-compatible function will do). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

export interface RetryPolicy {
  fetch: FetchLike
  /** Resolves after `ms`; may end early when `signal` aborts (the wait ends then anyway). */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  random: () => number
  /** Attempts of one request when the answer is a 5xx or no answer (the first included). */
  maxAttempts: number
  /** Seconds one call (a whole iteration or export) may spend waiting for rate-limit windows. */
  maxRetryWaitSeconds: number
  /** Milliseconds without a byte (the headers, or the next chunk of a body) before a request is abandoned. */
  timeoutMs: number
  onRetry?: (event: RetryEvent) => void
  onResponse?: (response: Response) => void
}

/** The waiting one call has done so far; shared by every request of that call. */
export class WaitBudget {
  waitedSeconds = 0
}

/**
 * Sends one GET and returns the 2xx response. 429 rate_limited waits `Retry-After` (within the
 * call's budget); 429 demo_quota_exceeded is thrown at once (it lasts until midnight UTC); a
 * 5xx answer or a failed connection is retried with jittered exponential backoff (a 5xx's
 * Retry-After, up to 30 s, when longer), at most `maxAttempts` tries; every other error answer is thrown as its typed error. No byte for
 * `timeoutMs` throws TimeoutError; the caller's `signal` ends it, waits included.
 */
export async function sendWithRetries(url: string, init: RequestInit, policy: RetryPolicy, budget: WaitBudget): Promise<Response> {
  const path = new URL(url).pathname
  let failures = 0
  let windowWaits = 0
  for (;;) {
    let response: Response
    try {
      response = await fetchWithTimeout(policy.fetch, url, init, policy.timeoutMs)
    } catch (cause) {
      // The caller gave up (an AbortSignal), or the server stalled: neither is a dropped
      // connection to retry (a stalled server would make every try wait as long again).
      if (init.signal?.aborted || cause instanceof TimeoutError) throw cause
      if (++failures >= policy.maxAttempts) throw new NetworkError(`no answer from ${path} after ${failures} attempts: ${String(cause)}`, cause)
      await wait(policy, { reason: 'network_error', attempt: failures, waitSeconds: backoff(policy, failures), path }, init.signal ?? undefined)
      continue
    }
    policy.onResponse?.(response)
    if (response.ok) return response

    const error = await errorFromResponse(response)
    // Only the minute window is waited for: demo_quota_exceeded (also a 429) lasts until
    // midnight UTC and is thrown below with every other answer under 500.
    if (error instanceof RateLimitedError) {
      const waitSeconds = Number(response.headers.get('retry-after')) || error.retryAfterSeconds
      if (budget.waitedSeconds + waitSeconds > policy.maxRetryWaitSeconds) throw error
      budget.waitedSeconds += waitSeconds
      await wait(policy, { reason: 'rate_limited', attempt: ++windowWaits, waitSeconds, path, status: 429 }, init.signal ?? undefined)
      continue
    }
    if (response.status < 500 || ++failures >= policy.maxAttempts) throw error
    // A 503's Retry-After (copy_behind 1 s, a balancer with no replica ready 5 s) is when the
    // server expects to answer: waited, bounded, unless the backoff is already longer.
    const said = Math.min(Number(response.headers.get('retry-after')) || 0, MAX_SERVER_RETRY_AFTER_SECONDS)
    await wait(policy, { reason: 'server_error', attempt: failures, waitSeconds: Math.max(said, backoff(policy, failures)), path, status: response.status }, init.signal ?? undefined)
  }
}

/** The longest a 5xx's Retry-After is waited: a wrong header must not hold a call for an hour. */
const MAX_SERVER_RETRY_AFTER_SECONDS = 30

/** 0.5 s doubling per attempt, capped at 8 s, each drawn between half and all of it (jitter). */
function backoff(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(8, 0.5 * 2 ** (attempt - 1))
  return ceiling * (0.5 + policy.random() * 0.5)
}

/** Waits `event.waitSeconds`; the caller's signal ends the wait at once (its reason thrown, an AbortError by default). */
async function wait(policy: RetryPolicy, event: RetryEvent, signal: AbortSignal | undefined): Promise<void> {
  policy.onRetry?.(event)
  if (!signal) return policy.sleep(event.waitSeconds * 1000)
  signal.throwIfAborted()
  let onAbort = () => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    await Promise.race([policy.sleep(event.waitSeconds * 1000, signal), aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}
