// The page's side of the charts: starts the worker (served as /assets/charts-worker.js), passes
// progress on, and turns what the worker reports back into the client's own typed errors, so
// the page explains a 401, 402 or 429 of the charts exactly as it explains the export's.

import { NetworkError, UnexpectedResponseError, errorFromResponse, type TicketQuery } from '../../client/index.ts'
import type { ChartNumbers, QueuePlace } from './aggregate.ts'
import type { FromWorker, LimitHeaders, ToWorker, WorkerFailure } from './messages.ts'
import { limitsShown, rememberLimits, type PageLimits } from '../api.ts'

export interface ChartsRequest {
  token: string
  query: TicketQuery
  zone: string
  firstDay: number
  lastDay: number
  places: Map<string, QueuePlace>
  queueZones: [string, string][] | null
  targetMinutes: number
}

export interface ChartsProgress {
  tickets: number
  bytes: number
  /** How far into the range the rows read so far reach, 0 to 1. */
  fraction: number
}

async function rebuild(failure: WorkerFailure): Promise<unknown> {
  switch (failure.kind) {
    case 'api':
      // The client's own reading of an error answer, from what the worker's client read.
      return errorFromResponse(new Response(JSON.stringify(failure.body), { status: failure.status, headers: failure.requestId ? { 'X-Request-Id': failure.requestId } : {} }))
    case 'unexpected':
      return new UnexpectedResponseError(failure.message, failure.status)
    case 'cancelled':
      return new DOMException('The charts were cancelled.', 'AbortError')
    case 'unreadable':
      return new UnexpectedResponseError(failure.message, 200)
    case 'network':
      return new NetworkError(failure.message, null)
  }
}

/**
 * The worker of the last charts that ended well, kept for the next (it has its scripts loaded).
 * Module state on purpose: this is the page's own code, one page per tab, and a worker outlives
 * any one computation.
 */
let idle: Worker | null = null

/**
 * Computes the charts' numbers in a worker. Resolves with them and the limits the last answer
 * showed; rejects with the client's typed error, whose limits limitsShownBy() knows, as the
 * page's own calls do. `signal` cancels: the worker aborts the export (the server releases its
 * statement) and is then ended.
 */
export function computeCharts(request: ChartsRequest, onProgress: (progress: ChartsProgress) => void, signal: AbortSignal): Promise<{ numbers: ChartNumbers; limits: PageLimits | null }> {
  const worker = idle ?? new Worker('/assets/charts-worker.js', { type: 'module', name: 'charts' })
  idle = null
  const send = (message: ToWorker) => worker.postMessage(message)
  return new Promise((resolve, reject) => {
    const finish = (keep: boolean) => {
      signal.removeEventListener('abort', cancel)
      worker.onmessage = null
      worker.onerror = null
      if (keep) idle = worker
      else worker.terminate()
    }
    const cancel = () => send({ type: 'cancel' })
    signal.addEventListener('abort', cancel, { once: true })
    // Cancelled before it began: the worker is told at once, after its start below.
    if (signal.aborted) queueMicrotask(cancel)
    worker.onerror = (event) => {
      finish(false)
      reject(new Error(`the charts worker failed: ${event.message}`))
    }
    worker.onmessage = async (event: MessageEvent<FromWorker>) => {
      const message = event.data
      if (message.type === 'progress') return onProgress(message)
      finish(message.type === 'done')
      const limits = limitsShown(new Headers(message.limitHeaders as LimitHeaders))
      if (message.type === 'done') return resolve({ numbers: message.numbers, limits })
      const error = await rebuild(message.failure)
      rememberLimits(error, limits)
      reject(error)
    }
    send({
      type: 'start',
      origin: location.origin,
      token: request.token,
      query: request.query,
      zone: request.zone,
      firstDay: request.firstDay,
      lastDay: request.lastDay,
      places: [...request.places],
      queueZones: request.queueZones,
      targetMinutes: request.targetMinutes,
    })
  })
}
