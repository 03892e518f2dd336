import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_RANGE_MS } from '../contract/vocabulary.ts'
import { InvalidRequestError, type Client } from '../client/index.ts'
import { splitIntoWindows, type Window } from '../client/windows.ts'
import type { SyncState, UpsertCount, Warehouse } from './warehouse.ts'

/** Wrong input: exit status 2, with a message that says what to do. */
export class SyncInputError extends Error {}

export interface SyncProgress {
  phase: 'backfill' | 'changes'
  windowsDone: number
  windowsTotal: number
  rows: number
  elapsedMs: number
}

export interface SyncSummary {
  firstRun: boolean
  windows: number
  tickets: UpsertCount
  locations: UpsertCount
  queues: UpsertCount
  /** The mirror holds every ticket created before this instant. */
  loadedUntil: string
  /** The token the next run starts from; null when the server keeps no change log. */
  changesToken: string | null
}

export interface SyncOptions {
  client: Client
  warehouse: Warehouse
  baseUrl: string
  /** `--since`: the start of the mirrored range on the first run. */
  since: number | null
  now: number
  /** Where a window's CSV is written on its way into DuckDB. */
  tempDir: string
  onProgress?: (progress: SyncProgress) => void
}

const TRAILING_MS = MAX_RANGE_MS
/**
 * How far past the run's start its ranges reach. A response's snapshot (and its changes token)
 * is taken when the server reads, after the run started: a ticket created in between must fall
 * inside a range read at or after its insert, or it would be behind the token and outside every
 * range read before, and so never loaded. Ranges therefore end tomorrow, not at the start.
 */
const AHEAD_MS = 86_400_000

/**
 * One run of `sync` (docs/loading.md#sync). First run: the range from `since` is loaded window
 * by window through the CSV export; each window is committed with the state that records it, so
 * a run stopped anywhere resumes at the first window not committed. Then, and on every later
 * run, one 90-day range ending tomorrow is asked for the tickets changed after the stored token
 * (tickets created since count as changes), so the mirror ends current. A ticket that changes
 * more than 89 days after its creation is not seen again: the API's ranges are 90 days.
 */
export async function runSync(options: SyncOptions): Promise<SyncSummary> {
  const { client, warehouse, baseUrl, now } = options
  const stored = await warehouse.state()
  const firstRun = stored === null
  if (stored && stored.baseUrl !== baseUrl) {
    throw new SyncInputError(`this file mirrors ${stored.baseUrl}; sync ${baseUrl} into another file`)
  }
  if (stored && options.since !== null && options.since !== stored.since) {
    throw new SyncInputError(`this file mirrors tickets since ${iso(stored.since)}; --since is fixed by the first run (leave it out, or use another file)`)
  }
  const horizon = now + AHEAD_MS
  let state: SyncState
  if (stored) {
    state = stored
  } else {
    const since = options.since ?? now - TRAILING_MS
    if (since >= now) throw new SyncInputError(`--since must be in the past; got ${iso(since)}`)
    // Saved with the first window, not before: a first run that fails before it (a wrong URL or
    // token) leaves a file that can still be given the right ones.
    state = { baseUrl, since, loadedUntil: since, backfillUntil: horizon, changesToken: null, lastRun: null }
  }

  const summary: SyncSummary = {
    firstRun,
    windows: 0,
    tickets: { inserted: 0, updated: 0 },
    locations: { inserted: 0, updated: 0 },
    queues: { inserted: 0, updated: 0 },
    loadedUntil: '',
    changesToken: null,
  }
  const startedAt = performance.now()
  const add = (count: UpsertCount) => {
    summary.tickets.inserted += count.inserted
    summary.tickets.updated += count.updated
  }
  const progress = (phase: SyncProgress['phase'], windowsDone: number, windowsTotal: number) =>
    options.onProgress?.({ phase, windowsDone, windowsTotal, rows: summary.tickets.inserted + summary.tickets.updated, elapsedMs: performance.now() - startedAt })

  const { locations } = await client.queues()
  await warehouse.transaction(async () => {
    const counts = await warehouse.upsertStructure(locations)
    summary.locations = counts.locations
    summary.queues = counts.queues
  })

  // The range not loaded yet that is older than the trailing 90 days (or the first run's
  // backfill): whole windows of the export, each committed with its state.
  // One request's range (90 days) that ends tomorrow: it starts 89 days before the run.
  const trailingFrom = Math.max(state.since, horizon - TRAILING_MS)
  const backfillTo = state.backfillUntil ?? Math.min(trailingFrom, now)
  const windows = state.loadedUntil < backfillTo ? splitIntoWindows(state.loadedUntil, backfillTo) : []
  for (const [index, window] of windows.entries()) {
    const last = index === windows.length - 1
    await loadWindow(options, window, undefined, async (count, token) => {
      // The first response's token is kept until the backfill ends: changes made meanwhile come
      // again in the pass below, never not at all.
      state = { ...state, loadedUntil: Math.min(window.toMs, now), changesToken: state.changesToken ?? token, backfillUntil: last ? null : state.backfillUntil }
      await warehouse.saveState(state)
      add(count)
    })
    summary.windows++
    progress('backfill', index + 1, windows.length)
  }
  if (!(await warehouse.hasTicketKey())) await warehouse.addTicketKey()

  // The trailing window: what changed since the stored token, or (without a change log, or a
  // token the server no longer accepts) the whole window again.
  const trailing = { fromMs: Math.min(trailingFrom, state.loadedUntil), toMs: horizon }
  // Without a change log, a window loaded whole a moment ago is not loaded again.
  const needed = state.changesToken !== null || state.loadedUntil < now
  if (needed && trailing.fromMs < trailing.toMs) {
    const save = async (count: UpsertCount, token: string | null) => {
      state = { ...state, loadedUntil: Math.max(state.loadedUntil, now), backfillUntil: null, changesToken: token }
      await warehouse.saveState(state)
      add(count)
    }
    try {
      await loadWindow(options, trailing, state.changesToken ?? undefined, save)
    } catch (error) {
      if (!(error instanceof InvalidRequestError && error.param === 'changedAfter')) throw error
      // The server's file was recreated (or lost its change log): load the window again whole.
      await loadWindow(options, trailing, undefined, save)
    }
    summary.windows++
    progress('changes', 1, 1)
  }

  summary.loadedUntil = iso(state.loadedUntil)
  summary.changesToken = state.changesToken
  await warehouse.transaction(() => warehouse.saveState({ ...state, lastRun: { at: iso(now), ...summary, changesToken: undefined } }))
  return summary
}

/**
 * One window through the CSV export into DuckDB: the response is written to a temporary file as
 * it arrives (so memory does not grow with the window), DuckDB's CSV reader upserts it, and
 * `commit` records the state in the same transaction.
 */
async function loadWindow(
  options: SyncOptions,
  window: Window,
  changedAfter: string | undefined,
  commit: (count: UpsertCount, token: string | null) => Promise<void>,
): Promise<void> {
  const file = join(options.tempDir, `window-${window.fromMs}.csv`)
  try {
    const csv = await options.client.exportCsv({ from: window.fromMs, to: window.toMs, changedAfter })
    await Bun.write(file, new Response(csv.stream))
    await options.warehouse.transaction(async () => {
      const count = await options.warehouse.upsertTicketsCsv(file, csv.demo)
      await commit(count, csv.changesToken)
    })
  } finally {
    rmSync(file, { force: true })
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}

export type { SyncState }
