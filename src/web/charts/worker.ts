// The charts' worker: reads the CSV export of the range through the project's client (which
// splits a range longer than 90 days into windows), parses and aggregates it as it streams, and
// posts progress and then the numbers. Off the page's thread, so the tab never freezes.

import { ApiResponseError, Client, TICKET_STATUSES, UnexpectedResponseError } from '../../client/index.ts'
import { LocalClock } from '../zone.ts'
import { ChartAggregator } from './aggregate.ts'
import { ByteKeys, CsvRecords } from './csv-rows.ts'
import type { FromWorker, LimitHeaders, StartCharts, ToWorker, WorkerFailure } from './messages.ts'

/** A dedicated worker's scope, as far as this file uses it (the project's TypeScript lib is the DOM's). */
const scope = globalThis as unknown as {
  postMessage(message: FromWorker): void
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null
}

/** How often progress is posted: often enough to move, rarely enough to cost nothing. */
const PROGRESS_EVERY_MS = 150
const LIMIT_HEADERS = ['RateLimit', 'RateLimit-Policy', 'X-Service-Demo']

let running: AbortController | null = null

scope.onmessage = (event) => {
  const message = event.data
  if (message.type === 'cancel') running?.abort()
  else void run(message)
}

class UnreadableExport extends Error {}

async function run(start: StartCharts): Promise<void> {
  const controller = new AbortController()
  running = controller
  const limitHeaders: LimitHeaders = {}
  const client = new Client({
    baseUrl: start.origin,
    token: start.token,
    // As the page's other calls: a 429 is shown to the analyst, not waited for here.
    maxAttempts: 1,
    maxRetryWaitSeconds: 0,
    onResponse: (response) => {
      for (const name of LIMIT_HEADERS) {
        const value = response.headers.get(name)
        if (value !== null) limitHeaders[name] = value
      }
    },
  })
  try {
    const exported = await client.exportCsv(start.query, { signal: controller.signal })
    const numbers = await aggregate(exported.stream, start, controller.signal)
    scope.postMessage({ type: 'done', numbers, limitHeaders })
  } catch (error) {
    scope.postMessage({ type: 'failed', failure: describe(error, controller.signal), limitHeaders })
  } finally {
    running = null
  }
}

async function aggregate(stream: ReadableStream<Uint8Array>, start: StartCharts, signal: AbortSignal) {
  const clock = new LocalClock(start.zone)
  const aggregator = new ChartAggregator(clock, start.firstDay, start.lastDay, new Map(start.places), start.targetMinutes)
  // Each location's own zone, one clock per zone: a queue's clock is found with its id's bytes.
  const clocks = new Map<string, LocalClock>([[start.zone, clock]])
  const clockFor = (zone: string) => {
    let found = clocks.get(zone)
    if (!found) clocks.set(zone, (found = new LocalClock(zone)))
    return found
  }
  const zoneOf = new Map(start.queueZones ?? [])
  const clockOf = (queueId: string) => clockFor(zoneOf.get(queueId) ?? start.zone)
  const all = start.queueZones ? [...new Set(zoneOf.values())].map(clockFor) : [clock]
  const fromMs = Math.min(...all.map((each) => each.startOfDay(start.firstDay)))
  const spanMs = Math.max(...all.map((each) => each.startOfDay(start.lastDay + 1))) - fromMs
  let columns: { status: number; queueId: number; createdAt: number; calledAt: number; completedAt: number } | null = null
  // In a typed array, not a variable the closure below assigns: a double stored into a closure's
  // variable is a new heap number each time, a million of them for a million rows.
  const lastCreated = new Float64Array([fromMs])
  // A row's status and queue id are looked up by their bytes: a million rows make no string for
  // either (a queue id's string is made once, when its bytes are first seen).
  const statuses = new ByteKeys<number>()
  TICKET_STATUSES.forEach((status, i) => statuses.set(new TextEncoder().encode(status), i))
  const queues = new ByteKeys<{ id: string; clock: LocalClock }>((bytes) => {
    const id = new TextDecoder().decode(bytes)
    return { id, clock: clockOf(id) }
  })
  const records = new CsvRecords((record) => {
    if (!columns) {
      const names = Array.from({ length: record.length }, (_, i) => record.field(i))
      columns = { status: names.indexOf('status'), queueId: names.indexOf('queueId'), createdAt: names.indexOf('createdAt'), calledAt: names.indexOf('calledAt'), completedAt: names.indexOf('completedAt') }
      if (Object.values(columns).includes(-1)) throw new UnreadableExport(`the export's header row lacks a column the charts need: ${names.join(',')}`)
      return
    }
    const created = record.instant(columns.createdAt)
    if (Number.isNaN(created)) throw new UnreadableExport(`a row has no readable createdAt: ${record.text()}`)
    const called = record.byteLength(columns.calledAt) > 0 ? record.instant(columns.calledAt) : null
    const queue = record.lookup(columns.queueId, queues)!
    const completed = called !== null && record.byteLength(columns.completedAt) > 0 ? record.instant(columns.completedAt) : null
    aggregator.addTicket(record.lookup(columns.status, statuses) ?? -1, queue.id, created, called, queue.clock, completed)
    lastCreated[0] = created
  })
  const reader = stream.getReader()
  let bytes = 0
  // At most one progress message per PROGRESS_EVERY_MS, the latest counts always posted in the
  // end: while the next window's request waits, the page shows where reading stopped.
  let trailing: ReturnType<typeof setTimeout> | undefined
  let postedAt = 0
  const postProgress = () => {
    trailing = undefined
    postedAt = performance.now()
    scope.postMessage({ type: 'progress', tickets: aggregator.ticketsRead(), bytes, fraction: spanMs > 0 ? Math.min(1, Math.max(0, (lastCreated[0]! - fromMs) / spanMs)) : 1 })
  }
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      signal.throwIfAborted()
      bytes += value.byteLength
      records.push(value)
      const wait = PROGRESS_EVERY_MS - (performance.now() - postedAt)
      if (wait <= 0) postProgress()
      else trailing ??= setTimeout(postProgress, wait)
    }
    records.end()
  } catch (error) {
    // Tell the server at once that nobody reads any more, so it releases the export's statement.
    await reader.cancel().catch(() => undefined)
    throw error
  } finally {
    clearTimeout(trailing)
  }
  return aggregator.numbers()
}

function describe(error: unknown, signal: AbortSignal): WorkerFailure {
  if (signal.aborted) return { kind: 'cancelled' }
  if (error instanceof ApiResponseError) return { kind: 'api', status: error.status, body: error.body, requestId: error.requestId }
  if (error instanceof UnexpectedResponseError) return { kind: 'unexpected', status: error.status, message: error.message }
  if (error instanceof UnreadableExport) return { kind: 'unreadable', message: error.message }
  return { kind: 'network', message: String((error as Error | undefined)?.message ?? error) }
}
