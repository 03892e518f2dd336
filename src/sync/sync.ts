import { MAX_RANGE_MS } from '../contract/vocabulary.ts'
import { InvalidRequestError, type Client } from '../client/index.ts'
import { splitIntoWindows, type Window } from '../client/windows.ts'
import { deletedSince } from './deletions.ts'
import { checkAnswer } from './answer-checks.ts'
import { DownloadBrokeError, watchDownload } from './download-watch.ts'
import type { RetryEvent } from '../client/index.ts'
import { noRows, SyncInputError, TooManyDeletesError, type RowCount, type SyncState, type SyncTarget } from './target.ts'

export interface SyncProgress {
  phase: 'backfill' | 'reconcile' | 'changes'
  windowsDone: number
  windowsTotal: number
  /** Rows read from the API this run (a reconcile reads every row, whether it changes or not). */
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
  /**
   * Whether this run's deletes came from the change feed: false when the server's data records
   * none (then only --reconcile deletes), null when no changes window was read.
   */
  deletesFollowed: boolean | null
  /** A reconcile owed by an earlier run (started, not finished) was taken up and finished by this one. */
  reconcileResumed: boolean
}

export interface SyncOptions {
  client: Client
  target: SyncTarget
  baseUrl: string
  /** `--since`: the start of the mirrored range on the first run. */
  since: number | null
  /** `--reconcile`: re-read the whole mirrored range and make the mirror equal to it. */
  reconcile?: boolean
  /**
   * `--max-delete`: the largest share (0 to 1) of the mirror's tickets a reconcile, or of its
   * locations or queues any run, may delete for being absent from the server's answer.
   * @default 0.5
   */
  maxDeleteShare?: number
  now: number
  onProgress?: (progress: SyncProgress) => void
  /** Told before a window whose download broke off is asked for again. */
  onRetry?: (event: RetryEvent) => void
  /** How the run waits before asking again; a test may pass one that does not. @default setTimeout */
  sleep?: (ms: number) => Promise<void>
}

/** Tries of one window whose download breaks off (the first included), as the client tries a request. */
export const WINDOW_ATTEMPTS = 4

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

const TRAILING_MS = MAX_RANGE_MS
/**
 * How far past the run's start its ranges reach. A response's snapshot (and its changes token)
 * is taken when the server reads, after the run started: a ticket created in between must fall
 * inside a range read at or after its insert, or it would be behind the token and outside every
 * range read before, and so never loaded. Ranges therefore end tomorrow, not at the start.
 */
const AHEAD_MS = 86_400_000
const DAY_MS = 86_400_000

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
  const historyReplaced = stored?.changesToken ? (await checkStoredToken(client, target, stored.changesToken, now)) === 'other_history' : false
  const { locations } = await client.queues()
  if (stored && !stored.changesToken) await checkLocations(target, locations)
  // Only now is the mirror created or brought to this release's shape: a refused run changes nothing.
  await target.prepare()
  const horizon = now + AHEAD_MS
  let state: SyncState
  if (stored) {
    state = stored
  } else {
    // By default the mirror starts at a day's boundary (00:00 UTC), so that its first day is whole.
    const since = options.since ?? Math.floor((now - TRAILING_MS) / DAY_MS) * DAY_MS
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
    deletesFollowed: null,
    reconcileResumed: false,
  }
  const startedAt = performance.now()
  let rowsRead = 0
  let phase: SyncProgress['phase'] = 'backfill'
  let windowsDone = 0
  let windowsTotal = 0
  const add = (count: RowCount) => {
    summary.tickets.inserted += count.inserted
    summary.tickets.updated += count.updated
    summary.tickets.deleted += count.deleted
  }
  const report = () => options.onProgress?.({ phase, windowsDone, windowsTotal, rows: rowsRead, elapsedMs: performance.now() - startedAt })
  const progress = (now: SyncProgress['phase'], done: number, total: number) => {
    ;[phase, windowsDone, windowsTotal] = [now, done, total]
    report()
  }
  const load = async (window: Window, changedAfter: string | undefined, next: (token: string | null) => SyncState, reconcile = false) => {
    // A changes window also deletes what the API says was deleted since the token, anywhere in
    // the mirrored range (sync/deletions.ts); asked once its rows are read, in its transaction.
    const deletions =
      changedAfter === undefined
        ? undefined
        : async () => {
            const ids = await deletedSince(client, { fromMs: state.since, toMs: horizon }, changedAfter)
            summary.deletesFollowed = ids !== null
            return ids
          }
    // A window read without changedAfter (backfill, reconcile) is held to the token already kept:
    // a replica whose copy lags behind it answers 503 rather than a window missing rows.
    const floor = changedAfter === undefined && !historyReplaced ? (state.changesToken ?? undefined) : undefined
    // A download that breaks off (a connection reset, a body cut short) is the API's failure,
    // however the target reported it: the window is asked for again, like a 5xx, a few times.
    for (let attempt = 1; ; attempt++) {
      const csv = await client.exportCsv({ from: window.fromMs, to: window.toMs, changedAfter }, { floor })
      const nextState = next(csv.changesToken)
      const download = watchDownload(csv.stream)
      const answer = checkAnswer(download.stream, window)
      let rowsThisTry = 0
      const rows = countRows(answer.stream, (count) => {
        rowsRead += count
        rowsThisTry += count
        report()
      })
      const maxDeletes = reconcile ? Math.max(0, Math.floor(maxShare * mirroredTickets) - reconcileDeleted) : undefined
      let count: RowCount
      try {
        count = await target.loadWindow({ csv: rows, demo: csv.demo, state: nextState, reconcile: reconcile ? window : undefined, deletions, maxDeletes })
      } catch (error) {
        const broke = download.failure()
        if (!broke) throw answer.refusal() ?? error
        if (!(broke instanceof DownloadBrokeError) || attempt >= WINDOW_ATTEMPTS) throw broke
        rowsRead -= rowsThisTry
        const waitSeconds = attempt
        options.onRetry?.({ reason: 'network_error', attempt, waitSeconds, path: '/v1/exports/tickets.csv' })
        await (options.sleep ?? sleep)(waitSeconds * 1000)
        continue
      }
      if (reconcile) reconcileDeleted += count.deleted
      add(count)
      state = nextState
      summary.windows++
      return
    }
  }

  // /v1/queues lists every location and queue: those it no longer lists go on every run, within --max-delete.
  const maxShare = options.maxDeleteShare ?? 0.5
  await checkStructureDeletes(target, locations, maxShare)
  const structure = await target.upsertStructure(locations, true)
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
    progress('backfill', index, windows.length)
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
  // --max-delete's share is of the mirror as this run found it; a reconcile's deletes add up across its windows.
  const mirroredTickets = await target.ticketCount()
  let reconcileDeleted = 0
  const reconcile = async (from: number) => {
    // Owed from now on: a run stopped before the first window is committed leaves the state
    // saying so, and the next run (plain or not) takes it up where it stopped.
    if (state.reconcileFrom === null) {
      state = { ...state, reconcileFrom: from }
      await target.saveState(state)
    }
    const ranges = splitIntoWindows(from, horizon)
    for (const [index, window] of ranges.entries()) {
      const last = index === ranges.length - 1
      progress('reconcile', index, ranges.length)
      await load(window, undefined, (token) => ({ ...state, changesToken: state.changesToken ?? token, reconcileFrom: last ? null : window.toMs }), true)
      progress('reconcile', index + 1, ranges.length)
    }
    summary.reconciled = true
  }

  // --reconcile (not on a first run, which has just read everything), or one that stopped
  // half-way, however it was started: it goes on from where it stopped.
  summary.reconcileResumed = stored?.reconcileFrom != null
  if ((options.reconcile && !firstRun) || state.reconcileFrom !== null) await reconcile(state.reconcileFrom ?? state.since)

  // The trailing window: what changed since the stored token, or (without a change log) the
  // whole window again.
  const trailing = { fromMs: Math.min(trailingFrom, state.loadedUntil), toMs: horizon }
  // Without a change log, a window loaded whole a moment ago is not loaded again.
  const needed = state.changesToken !== null || state.loadedUntil < now
  if (needed && trailing.fromMs < trailing.toMs) {
    const next = (token: string | null): SyncState => ({ ...state, loadedUntil: Math.max(state.loadedUntil, now), backfillUntil: null, changesToken: token })
    progress('changes', 0, 1)
    try {
      await load(trailing, state.changesToken ?? undefined, next)
    } catch (error) {
      if (!(error instanceof InvalidRequestError && error.param === 'changedAfter')) throw error
      // The server refuses the token: its file was replaced or recreated (a new change history),
      // so the tickets it holds may not be the ones mirrored, in any window. The whole range is
      // reconciled (deleting what the server no longer has), then the changes made meanwhile read.
      state = { ...state, changesToken: null }
      await reconcile(state.since)
      progress('changes', 0, 1)
      await load(trailing, state.changesToken ?? undefined, next)
    }
    progress('changes', 1, 1)
  }

  summary.loadedUntil = iso(state.loadedUntil)
  summary.changesToken = state.changesToken
  await target.completeRun()
  await target.saveState({ ...state, lastRun: { at: iso(now), ...summary, changesToken: undefined } })
  return summary
}

/**
 * A mirror belongs to the organisation whose token made it: before anything is written, the
 * stored changes token is shown to the server with this run's API token. The server refuses a
 * token of another organisation (this run's token is the wrong one: exit 2, nothing changed);
 * a token of an earlier history of the same organisation means the mirror is reconciled whole.
 * One page of one row over the last millisecond: the cheapest request that checks the token.
 */
async function checkStoredToken(client: Client, target: SyncTarget, changesToken: string, now: number): Promise<'current' | 'other_history'> {
  try {
    const pages = client.pages({ from: now - 1, to: now, changedAfter: changesToken, limit: 1 })
    await pages.next()
    await pages.return(undefined)
    return 'current'
  } catch (error) {
    if (!(error instanceof InvalidRequestError && error.param === 'changedAfter')) throw error
    if (error.reason === 'other_organisation') {
      throw new SyncInputError(
        `${target.description} mirrors another organisation than the token's (the API refused its changes token as another organisation's); sync this token into another target, or give the token of the organisation it mirrors`,
      )
    }
    return 'other_history'
  }
}

/**
 * The locations and queues /v1/queues no longer lists are deleted on every run, but never more
 * than `maxShare` of either table of a mirror that holds some: an empty or cut-short answer (a
 * wrong server, a broken proxy) would otherwise empty the mirror. Throws before anything changes.
 */
async function checkStructureDeletes(target: SyncTarget, locations: readonly { id: string; queues: readonly { id: string }[] }[], maxShare: number): Promise<void> {
  const listed = {
    locations: new Set(locations.map((location) => location.id)),
    queues: new Set(locations.flatMap((location) => location.queues.map((queue) => queue.id))),
  }
  for (const [what, mirrored] of [['locations', await target.locationIds()], ['queues', await target.queueIds()]] as const) {
    const absent = mirrored.filter((id) => !listed[what].has(id)).length
    if (absent > Math.floor(maxShare * mirrored.length)) throw new TooManyDeletesError(what, absent, mirrored.length)
  }
}

/**
 * A mirror without a changes token (made while the server kept no change log) is known by its
 * locations: one that holds locations and shares none with the API's is another organisation's.
 */
async function checkLocations(target: SyncTarget, locations: readonly { id: string }[]): Promise<void> {
  const mirrored = await target.locationIds()
  const listed = new Set(locations.map((location) => location.id))
  if (mirrored.length > 0 && !mirrored.some((id) => listed.has(id))) {
    throw new SyncInputError(
      `${target.description} mirrors another organisation than the token's (none of its locations is one the API lists for this token); sync this token into another target, or give the token of the organisation it mirrors`,
    )
  }
}

/**
 * The stream as it is, telling `onRows` how many rows went by, at most a few times a second:
 * a window of a reconcile may read half a million rows and change none, and the progress line
 * shows that it is reading. Rows are counted by their line ends (the header's is not a row).
 */
function countRows(stream: ReadableStream<Uint8Array>, onRows: (count: number) => void): ReadableStream<Uint8Array> {
  let headerSeen = false
  let pending = 0
  let toldAt = 0
  const tell = () => {
    if (pending > 0) onRows(pending)
    pending = 0
    toldAt = performance.now()
  }
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) {
          if (headerSeen) pending++
          else headerSeen = true
        }
        if (performance.now() - toldAt > 250) tell()
        controller.enqueue(chunk)
      },
      flush: tell,
    }),
  )
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}
