import { MAX_RANGE_MS } from '../contract/vocabulary.ts'
import { InvalidRequestError, type Client } from '../client/index.ts'
import { splitIntoWindows, type Window } from '../client/windows.ts'
import { noRows, SyncInputError, type RowCount, type SyncState, type SyncTarget } from './target.ts'

export interface SyncProgress {
  phase: 'backfill' | 'reconcile' | 'changes'
  windowsDone: number
  windowsTotal: number
  rows: number
  elapsedMs: number
}

export interface SyncSummary {
  firstRun: boolean
  /** Whether this run re-read the mirrored range whole (--reconcile) to its end. */
  reconciled: boolean
  windows: number
  tickets: RowCount
  locations: RowCount
  queues: RowCount
  /** The mirror holds every ticket created before this instant. */
  loadedUntil: string
  /** The token the next run starts from; null when the server keeps no change log. */
  changesToken: string | null
}

export interface SyncOptions {
  client: Client
  target: SyncTarget
  baseUrl: string
  /** `--since`: the start of the mirrored range on the first run. */
  since: number | null
  /** `--reconcile`: re-read the whole mirrored range and make the mirror equal to it. */
  reconcile?: boolean
  now: number
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
 * a run stopped anywhere resumes at the first window not committed. With --reconcile, the whole
 * mirrored range is then read again window by window and the mirror made equal to it (deletes
 * included), resumable the same way. Then, and on every later run, one 90-day range ending
 * tomorrow is asked for the tickets changed after the stored token (tickets created since count
 * as changes), so the mirror ends current.
 */
export async function runSync(options: SyncOptions): Promise<SyncSummary> {
  const { client, target, baseUrl, now } = options
  const stored = await target.state()
  const firstRun = stored === null
  if (stored && stored.baseUrl !== baseUrl) {
    throw new SyncInputError(`${target.description} mirrors ${stored.baseUrl}; sync ${baseUrl} into another target`)
  }
  if (stored && options.since !== null && options.since !== stored.since) {
    throw new SyncInputError(`${target.description} mirrors tickets since ${iso(stored.since)}; --since is fixed by the first run (leave it out, or use another target)`)
  }
  const horizon = now + AHEAD_MS
  let state: SyncState
  if (stored) {
    state = stored
  } else {
    const since = options.since ?? now - TRAILING_MS
    // Saved with the first window, not before: a first run that fails before it (a wrong URL or
    // token) leaves a target that can still be given the right ones.
    state = { baseUrl, since, loadedUntil: since, backfillUntil: horizon, changesToken: null, reconcileFrom: null, lastRun: null }
  }

  const summary: SyncSummary = {
    firstRun,
    reconciled: false,
    windows: 0,
    tickets: noRows(),
    locations: noRows(),
    queues: noRows(),
    loadedUntil: '',
    changesToken: null,
  }
  const startedAt = performance.now()
  const add = (count: RowCount) => {
    summary.tickets.inserted += count.inserted
    summary.tickets.updated += count.updated
    summary.tickets.deleted += count.deleted
  }
  const progress = (phase: SyncProgress['phase'], windowsDone: number, windowsTotal: number) =>
    options.onProgress?.({
      phase,
      windowsDone,
      windowsTotal,
      rows: summary.tickets.inserted + summary.tickets.updated + summary.tickets.deleted,
      elapsedMs: performance.now() - startedAt,
    })
  const load = async (window: Window, changedAfter: string | undefined, next: (token: string | null) => SyncState, reconcile = false) => {
    const csv = await client.exportCsv({ from: window.fromMs, to: window.toMs, changedAfter })
    const nextState = next(csv.changesToken)
    add(await target.loadWindow({ csv: csv.stream, demo: csv.demo, state: nextState, reconcile: reconcile ? window : undefined }))
    state = nextState
    summary.windows++
  }

  const { locations } = await client.queues()
  const structure = await target.upsertStructure(locations)
  summary.locations = structure.locations
  summary.queues = structure.queues

  // The range not loaded yet that is older than the trailing 90 days (or the first run's
  // backfill): whole windows of the export, each committed with its state.
  // One request's range (90 days) that ends tomorrow: it starts 89 days before the run.
  const trailingFrom = Math.max(state.since, horizon - TRAILING_MS)
  const backfillTo = state.backfillUntil ?? Math.min(trailingFrom, now)
  const windows = state.loadedUntil < backfillTo ? splitIntoWindows(state.loadedUntil, backfillTo) : []
  for (const [index, window] of windows.entries()) {
    const last = index === windows.length - 1
    // The first response's token is kept until the backfill ends: changes made meanwhile come
    // again in the pass below, never not at all.
    await load(window, undefined, (token) => ({
      ...state,
      loadedUntil: Math.min(window.toMs, now),
      changesToken: state.changesToken ?? token,
      backfillUntil: last ? null : state.backfillUntil,
    }))
    progress('backfill', index + 1, windows.length)
  }

  // Reconciling: the whole mirrored range again, from `from`. Each window's export is the
  // server's truth for the tickets created in it: what differs is written, what is missing is
  // deleted. The first response's token is kept (when none is held) so that changes made during
  // the pass come again in the changes pass below.
  const reconcile = async (from: number) => {
    const ranges = splitIntoWindows(from, horizon)
    for (const [index, window] of ranges.entries()) {
      const last = index === ranges.length - 1
      await load(window, undefined, (token) => ({ ...state, changesToken: state.changesToken ?? token, reconcileFrom: last ? null : window.toMs }), true)
      progress('reconcile', index + 1, ranges.length)
    }
    summary.reconciled = true
  }

  // --reconcile (not on a first run, which has just read everything), or one that stopped
  // half-way, however it was started: it goes on from where it stopped.
  if ((options.reconcile && !firstRun) || state.reconcileFrom !== null) await reconcile(state.reconcileFrom ?? state.since)

  // The trailing window: what changed since the stored token, or (without a change log) the
  // whole window again.
  const trailing = { fromMs: Math.min(trailingFrom, state.loadedUntil), toMs: horizon }
  // Without a change log, a window loaded whole a moment ago is not loaded again.
  const needed = state.changesToken !== null || state.loadedUntil < now
  if (needed && trailing.fromMs < trailing.toMs) {
    const next = (token: string | null): SyncState => ({ ...state, loadedUntil: Math.max(state.loadedUntil, now), backfillUntil: null, changesToken: token })
    try {
      await load(trailing, state.changesToken ?? undefined, next)
    } catch (error) {
      if (!(error instanceof InvalidRequestError && error.param === 'changedAfter')) throw error
      // The server refuses the token: its file was replaced or recreated (a new change history),
      // so the tickets it holds may not be the ones mirrored, in any window. The whole range is
      // reconciled (deleting what the server no longer has), then the changes made meanwhile read.
      state = { ...state, changesToken: null }
      await reconcile(state.since)
      await load(trailing, state.changesToken ?? undefined, next)
    }
    progress('changes', 1, 1)
  }

  summary.loadedUntil = iso(state.loadedUntil)
  summary.changesToken = state.changesToken
  await target.saveState({ ...state, lastRun: { at: iso(now), ...summary, changesToken: undefined } })
  return summary
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}
