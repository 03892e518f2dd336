// The four charts' numbers, accumulated one ticket at a time as the export streams (in the
// worker): counts per local day and status, per local weekday and hour, per queue and outcome.
// A queue is one queue of one location (its id): two locations' "Payments" are two rows.
// No row is kept. An exact quantile needs every value, so each called ticket's wait is kept as
// one number in a typed array (8 bytes: 8 MB for a million called tickets), sorted at the end.

import type { TicketStatus } from '../../client/index.ts'
import { TICKET_STATUSES } from '../../client/index.ts'
import { dayKey, weekday, type DayNumber, type LocalClock } from '../zone.ts'

/** The statuses a ticket ends in: the outcomes compared per queue. */
export const OUTCOMES = ['COMPLETED', 'NO_SHOW', 'CANCELED', 'SKIPPED'] as const satisfies readonly TicketStatus[]
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const

/** The names a queue is shown by: its location's and its own. */
export interface QueuePlace {
  location: string
  queue: string
}

/** A chart of many queues or locations draws this many rows, the rest as one, until asked for all. */
export const TOP_ROWS = 12

/** A wait row's label, and the order the wait chart draws rows in: the longest median first. */
export function byLongestMedian<T extends QueuePlace & { medianMs: number }>(a: T, b: T): number {
  return b.medianMs - a.medianMs || a.location.localeCompare(b.location) || a.queue.localeCompare(b.queue)
}

/** What the charts draw; plain data, posted from the worker to the page. */
export interface ChartNumbers {
  zone: string
  /** Tickets read. */
  tickets: number
  /** Every local day of the range, in order, with its tickets per status (TICKET_STATUSES order) and its length in hours. */
  days: { day: string; hours: number; counts: number[] }[]
  /** Per queue with at least one called ticket: waits in ms (quantiles interpolated linearly). */
  waits: (QueuePlace & { called: number; medianMs: number; p90Ms: number })[]
  /** arrivals[weekday][hour]: tickets created then, Monday first. */
  arrivals: number[][]
  /** Per queue with at least one ended ticket: its tickets per outcome (OUTCOMES order). */
  outcomes: (QueuePlace & { counts: number[] })[]
  /**
   * The queues after the first TOP_ROWS in byLongestMedian order, their waits pooled (a median
   * of medians would be no median): what the wait chart draws as one row. Null when none.
   */
  otherWaits: { queues: number; called: number; medianMs: number; p90Ms: number } | null
  /** Per location with a ticket: its tickets per status (TICKET_STATUSES order). */
  locations: { location: string; counts: number[] }[]
  /**
   * Service time (completedAt − calledAt of the completed tickets that were called), per queue
   * and per location (pooled): how many, median and 90th percentile in ms.
   */
  service: { queues: ServiceRow[]; locations: ServiceRow[]; other: PooledRest | null }
  /** Of the called tickets, how many were called within the target wait, per queue and per location. */
  target: { minutes: number; queues: TargetRow[]; locations: TargetRow[] }
}

export type ServiceRow = QueuePlace & { completed: number; medianMs: number; p90Ms: number }
/**
 * The locations after the first TOP_ROWS in byLongestMedian order, their service times pooled:
 * what the service chart draws as one row. Null when none.
 */
export type PooledRest = { locations: number; completed: number; medianMs: number; p90Ms: number }
export type TargetRow = QueuePlace & { called: number; within: number }

/**
 * The value at quantile `q` of sorted values, interpolated linearly between the two nearest
 * ranks: DuckDB's quantile_cont and numpy's default (position q·(n−1) of the sorted values).
 */
export function quantileCont(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN
  const position = q * (sorted.length - 1)
  const low = sorted[Math.floor(position)]!
  const high = sorted[Math.ceil(position)]!
  return low + (high - low) * (position - Math.floor(position))
}

/** A growing column of numbers in one typed array (doubled when full): 8 bytes a value, no object per value. */
class NumberColumn {
  private values = new Float64Array(1024)
  length = 0

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.length++] = value
  }

  sorted(): Float64Array {
    return this.values.subarray(0, this.length).sort()
  }
}

const STATUS_INDEX = new Map<string, number>(TICKET_STATUSES.map((status, i) => [status, i]))
/** A status's outcome index (OUTCOMES order) by its TICKET_STATUSES index; -1 for a status that is no outcome. */
const OUTCOME_OF_STATUS = TICKET_STATUSES.map((status) => (OUTCOMES as readonly string[]).indexOf(status))
const COMPLETED = TICKET_STATUSES.indexOf('COMPLETED')
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

export class ChartAggregator {
  private readonly perDay = new Map<DayNumber, number[]>()
  private readonly arrivals = Array.from({ length: 7 }, () => new Array<number>(24).fill(0))
  private readonly waits = new Map<string, NumberColumn>()
  private readonly outcomes = new Map<string, number[]>()
  private readonly perQueue = new Map<string, number[]>()
  private readonly service = new Map<string, NumberColumn>()
  /** Per queue: [called, called within the target]. */
  private readonly within = new Map<string, [number, number]>()
  private readonly targetMs: number
  private tickets = 0

  /** `places`: queue id → its location's and its own name (a queue the list lacks is shown by its id). */
  constructor(
    private readonly clock: LocalClock,
    private readonly firstDay: DayNumber,
    private readonly lastDay: DayNumber,
    private readonly places: ReadonlyMap<string, QueuePlace>,
    /** The target wait the analyst set, in minutes. */
    private readonly targetMinutes = 10,
  ) {
    this.targetMs = targetMinutes * 60_000
  }

  /** One ticket: its status, queue id, and creation and call instants (epoch ms; null when never called). */
  add(status: string, queueId: string, createdMs: number, calledMs: number | null, completedMs: number | null = null): void {
    this.addTicket(STATUS_INDEX.get(status) ?? -1, queueId, createdMs, calledMs, this.clock, completedMs)
  }

  /**
   * add, with the status as its TICKET_STATUSES index (-1 for one not known): what the worker
   * has without making strings for each row (it keeps one string per queue id).
   */
  addTicket(statusIndex: number, queueId: string, createdMs: number, calledMs: number | null, clock: LocalClock = this.clock, completedMs: number | null = null): void {
    // The local day and hour as clock.local gives them, without an object for each ticket: in
    // the location's own zone when `clock` is its, a ticket outside its own days not counted.
    const wall = createdMs + clock.offset(createdMs)
    const day = Math.floor(wall / DAY_MS)
    if (day < this.firstDay || day > this.lastDay) return
    this.tickets++
    const hour = Math.floor((wall - day * DAY_MS) / HOUR_MS)
    let counts = this.perDay.get(day)
    if (!counts) this.perDay.set(day, (counts = new Array<number>(TICKET_STATUSES.length).fill(0)))
    if (statusIndex >= 0) counts[statusIndex]!++
    let queue = this.perQueue.get(queueId)
    if (!queue) this.perQueue.set(queueId, (queue = new Array<number>(TICKET_STATUSES.length).fill(0)))
    if (statusIndex >= 0) queue[statusIndex]!++
    this.arrivals[weekday(day)]![hour]!++
    if (calledMs !== null) {
      let waits = this.waits.get(queueId)
      if (!waits) this.waits.set(queueId, (waits = new NumberColumn()))
      waits.push(calledMs - createdMs)
      let within = this.within.get(queueId)
      if (!within) this.within.set(queueId, (within = [0, 0]))
      within[0]++
      if (calledMs - createdMs <= this.targetMs) within[1]++
      if (completedMs !== null && statusIndex === COMPLETED) {
        let service = this.service.get(queueId)
        if (!service) this.service.set(queueId, (service = new NumberColumn()))
        service.push(completedMs - calledMs)
      }
    }
    const outcome = statusIndex >= 0 ? OUTCOME_OF_STATUS[statusIndex]! : -1
    if (outcome >= 0) {
      let ended = this.outcomes.get(queueId)
      if (!ended) this.outcomes.set(queueId, (ended = new Array<number>(OUTCOMES.length).fill(0)))
      ended[outcome]!++
    }
  }

  /** Tickets added so far. */
  ticketsRead(): number {
    return this.tickets
  }

  private place(queueId: string): QueuePlace {
    return this.places.get(queueId) ?? { location: '', queue: queueId }
  }

  numbers(): ChartNumbers {
    const byName = <T extends QueuePlace>(rows: T[]) => rows.sort((a, b) => a.location.localeCompare(b.location) || a.queue.localeCompare(b.queue))
    const days: ChartNumbers['days'] = []
    for (let day = this.firstDay; day <= this.lastDay; day++) {
      days.push({ day: dayKey(day), hours: this.clock.hoursIn(day), counts: this.perDay.get(day) ?? new Array<number>(TICKET_STATUSES.length).fill(0) })
    }
    const sortedWaits = [...this.waits].map(([queueId, column]) => {
      const sorted = column.sorted()
      return { ...this.place(queueId), sorted, called: sorted.length, medianMs: quantileCont(sorted, 0.5), p90Ms: quantileCont(sorted, 0.9) }
    })
    const others = [...sortedWaits].sort(byLongestMedian).slice(TOP_ROWS)
    let otherWaits: ChartNumbers['otherWaits'] = null
    if (others.length > 0) {
      const pooled = new Float64Array(others.reduce((n, row) => n + row.called, 0))
      let at = 0
      for (const row of others) pooled.set(row.sorted, (at += row.called) - row.called)
      pooled.sort()
      otherWaits = { queues: others.length, called: pooled.length, medianMs: quantileCont(pooled, 0.5), p90Ms: quantileCont(pooled, 0.9) }
    }
    const locations = new Map<string, number[]>()
    for (const [queueId, counts] of this.perQueue) {
      const { location } = this.place(queueId)
      const sums = locations.get(location) ?? new Array<number>(TICKET_STATUSES.length).fill(0)
      counts.forEach((count, i) => (sums[i]! += count))
      locations.set(location, sums)
    }
    // Per location, every queue's values pooled: a median of medians would be no median.
    const serviceQueues = [...this.service].map(([queueId, column]) => ({ ...this.place(queueId), sorted: column.sorted() }))
    const serviceByLocation = new Map<string, Float64Array[]>()
    for (const row of serviceQueues) serviceByLocation.set(row.location, [...(serviceByLocation.get(row.location) ?? []), row.sorted])
    const serviceRow = (place: QueuePlace, sorted: Float64Array): ServiceRow => ({ ...place, completed: sorted.length, medianMs: quantileCont(sorted, 0.5), p90Ms: quantileCont(sorted, 0.9) })
    const pooled = (columns: Float64Array[]) => {
      const all = new Float64Array(columns.reduce((n, column) => n + column.length, 0))
      let at = 0
      for (const column of columns) all.set(column, (at += column.length) - column.length)
      return all.sort()
    }
    const serviceLocations = [...serviceByLocation].map(([location, columns]) => {
      const sorted = pooled(columns)
      return { ...serviceRow({ location, queue: '' }, sorted), sorted }
    })
    // As the waits: the rows after the chart's first TOP_ROWS pooled into its one last row.
    const otherLocations = [...serviceLocations].sort(byLongestMedian).slice(TOP_ROWS)
    let otherService: PooledRest | null = null
    if (otherLocations.length > 0) {
      const all = pooled(otherLocations.map((row) => row.sorted))
      otherService = { locations: otherLocations.length, completed: all.length, medianMs: quantileCont(all, 0.5), p90Ms: quantileCont(all, 0.9) }
    }
    const targetQueues = [...this.within].map(([queueId, [called, within]]) => ({ ...this.place(queueId), called, within }))
    const targetByLocation = new Map<string, TargetRow>()
    for (const row of targetQueues) {
      const sums = targetByLocation.get(row.location) ?? { location: row.location, queue: '', called: 0, within: 0 }
      sums.called += row.called
      sums.within += row.within
      targetByLocation.set(row.location, sums)
    }
    const byLocation = <T extends QueuePlace>(rows: T[]) => rows.sort((a, b) => a.location.localeCompare(b.location))
    return {
      service: {
        queues: byName(serviceQueues.map(({ sorted, ...place }) => serviceRow({ location: place.location, queue: place.queue }, sorted))),
        locations: byLocation(serviceLocations.map(({ sorted: _, ...row }) => row)),
        other: otherService,
      },
      target: { minutes: this.targetMinutes, queues: byName(targetQueues), locations: byLocation([...targetByLocation.values()]) },
      zone: this.clock.zone,
      tickets: this.tickets,
      days,
      waits: byName(sortedWaits.map(({ sorted: _, ...row }) => row)),
      otherWaits,
      locations: [...locations].map(([location, counts]) => ({ location, counts })).sort((a, b) => a.location.localeCompare(b.location)),
      arrivals: this.arrivals,
      outcomes: byName([...this.outcomes].map(([queueId, counts]) => ({ ...this.place(queueId), counts }))),
    }
  }
}
