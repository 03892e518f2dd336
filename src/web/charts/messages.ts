// What the page and the charts worker say to each other (structured clone: plain data only).

import type { TicketQuery } from '../../client/index.ts'
import type { ChartNumbers, QueuePlace } from './aggregate.ts'

export interface StartCharts {
  type: 'start'
  origin: string
  token: string
  query: TicketQuery
  zone: string
  firstDay: number
  lastDay: number
  /** Queue id → the location's and the queue's names the charts show. */
  places: [string, QueuePlace][]
  /** Queue id → its location's zone, when days and hours are each location's own; else null. */
  queueZones: [string, string][] | null
  /** The target wait the analyst set, in minutes. */
  targetMinutes: number
}

export type ToWorker = StartCharts | { type: 'cancel' }

/** An error as it can cross to the page, which rebuilds the client's typed error from it. */
export type WorkerFailure =
  | { kind: 'api'; status: number; body: Record<string, unknown>; requestId: string | null }
  | { kind: 'unexpected'; status: number; message: string }
  | { kind: 'cancelled' }
  | { kind: 'network'; message: string }
  | { kind: 'unreadable'; message: string }

/** The rate-limit headers of the last answer (the page reads the demo quota from them). */
export type LimitHeaders = Record<string, string>

export type FromWorker =
  | { type: 'progress'; tickets: number; bytes: number; fraction: number }
  | { type: 'done'; numbers: ChartNumbers; limitHeaders: LimitHeaders }
  | { type: 'failed'; failure: WorkerFailure; limitHeaders: LimitHeaders }
