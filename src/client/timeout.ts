import type { FetchLike } from './retry.ts'

/** No byte came for `timeoutMs`: neither the headers of an answer nor the next chunk of its body. */
export class TimeoutError extends Error {
  constructor(
    readonly path: string,
    readonly timeoutMs: number,
  ) {
    super(`no answer from ${path} for ${timeoutMs / 1000} s (the server or the network stalled)`)
    this.name = 'TimeoutError'
  }
}

/**
 * One fetch whose every wait is bounded: the wait for the headers, and each wait for the next
 * chunk of the body. Only a read the caller is waiting on is timed, so a slow reader of the body
 * (a warehouse busy with the previous chunk) is not taken for a stalled server. A stall aborts
 * the request and surfaces as TimeoutError; the caller's own `signal` aborts it as well, with the
 * caller's reason.
 */
export async function fetchWithTimeout(fetch: FetchLike, url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  const path = new URL(url).pathname
  const controller = new AbortController()
  const callerSignal = init.signal ?? undefined
  const onCallerAbort = () => controller.abort(callerSignal!.reason)
  if (callerSignal?.aborted) onCallerAbort()
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true })
  let timedOut = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const startTimer = () => {
    timer = setTimeout(() => {
      timedOut = true
      controller.abort(new TimeoutError(path, timeoutMs))
    }, timeoutMs)
  }
  const stopTimer = () => clearTimeout(timer)
  const finish = () => {
    stopTimer()
    callerSignal?.removeEventListener('abort', onCallerAbort)
  }
  const failure = (cause: unknown) => (timedOut ? new TimeoutError(path, timeoutMs) : cause)

  startTimer()
  let response: Response
  try {
    response = await fetch(url, { ...init, signal: controller.signal })
  } catch (cause) {
    finish()
    throw failure(cause)
  }
  stopTimer()
  if (!response.body) {
    finish()
    return response
  }
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(out) {
      startTimer()
      try {
        const { done, value } = await reader.read()
        stopTimer()
        if (done) {
          finish()
          out.close()
        } else out.enqueue(value)
      } catch (cause) {
        finish()
        out.error(failure(cause))
      }
    },
    async cancel(reason) {
      finish()
      await reader.cancel(reason)
    },
  })
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}
