/**
 * The supervisor's states and transitions, in one place and pure: `transition(state, event)`
 * returns the next state and the effects to carry out (start or signal a process, set a timer,
 * log, exit). `src/server/workers.ts` runs the processes, the timers and the signals and feeds
 * what happens back in as events; nothing here knows a pid, a clock or a signal handler, so each
 * transition is tested on its own (test/unit/supervisor-states.test.ts).
 *
 * Phases: `starting` (the first workers not all listening yet) → `running` → `stopping` (a
 * SIGTERM/SIGINT passed on once: the workers drain) → `forced` (a second one). From `starting`,
 * a worker that exits before it listens leads to `failed`: the others are stopped and the
 * supervisor exits with that worker's status (one killed by a signal is restarted instead). A rolling restart (SIGHUP) is a sub-state of
 * `running`: the index whose replacement is starting, and whether another was asked for since.
 */

export type Phase = 'starting' | 'running' | 'stopping' | 'forced' | 'failed'

/**
 * One worker process, known by an id of the supervisor's own (a pid is the shell's business;
 * during a rolling restart two processes hold one index).
 * - `serving`: holds its index (started at start-up, after a death, or a replacement adopted);
 * - `replacement`: a rolling restart's new process, not listening yet (or given up on);
 * - `retiring`: replaced, told to drain; its exit is expected.
 */
export interface WorkerRecord {
  id: number
  index: number
  role: 'serving' | 'replacement' | 'retiring'
  listened: boolean
  startedAt: number
  /** Started again after a death: its listening is logged as worker_restarted. */
  restarted: boolean
}

export interface SupervisorState {
  readonly workers: number
  readonly drainMs: number
  readonly phase: Phase
  readonly nextId: number
  /** Every live process. */
  readonly live: readonly WorkerRecord[]
  /** A rolling restart in progress: the index being replaced and its replacement's id. */
  readonly reload?: { index: number; replacement: number }
  /** A SIGHUP came during a rolling restart: another runs after it (the code may have changed again). */
  readonly reloadAgain: boolean
  /** The last restart delay of each index (see restartDelay). */
  readonly backoff: Readonly<Record<number, number>>
  /** Stopping: how many workers that had listened were asked to drain, and whether one exited with another status than 0. */
  readonly drained: number
  readonly unclean: boolean
  /** Failed: the status to exit with. */
  readonly exitCode: number
}

export type StopSignal = 'SIGTERM' | 'SIGINT'

export type SupervisorEvent =
  | { type: 'start'; at: number }
  | { type: 'listening'; id: number; at: number }
  | { type: 'exited'; id: number; code: number | null; at: number }
  | { type: 'restart_due'; index: number; at: number }
  | { type: 'replacement_timeout'; id: number; at: number }
  /** SIGHUP. */
  | { type: 'reload'; at: number }
  | { type: 'stop'; signal: StopSignal }

/** A log field's value; the `…Of` ones are a process's pid, exit status or signal, which the shell knows. */
export type FieldValue = string | number | boolean | { pidOf: number } | { codeOf: number } | { signalOf: number }

export type Effect =
  | { type: 'spawn'; id: number; index: number }
  | { type: 'kill'; id: number; signal: StopSignal | 'SIGKILL' }
  | { type: 'restart_after'; index: number; delayMs: number }
  | { type: 'replacement_deadline'; id: number; ms: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; event: string; fields: Record<string, FieldValue> }
  /** Every worker listens for the first time. */
  | { type: 'ready' }
  /** A worker that died was started again (the metrics count it). */
  | { type: 'restarted' }
  | { type: 'exit'; code: number }

/** How long a rolling restart waits for a replacement to listen before it gives up on it. */
export const REPLACEMENT_START_MS = 60_000

/** A worker that lived at least this long is restarted at once; one that died sooner waits, doubling. */
const STABLE_MS = 5_000
const FIRST_DELAY_MS = 100
const MAX_DELAY_MS = 5_000

/**
 * How long to wait before restarting a worker that died: a worker that keeps dying at start (a
 * broken file, a full disk) must not be restarted in a tight loop that floods the log.
 */
export function restartDelay(last: number | undefined, livedMs: number): number {
  return livedMs >= STABLE_MS ? FIRST_DELAY_MS : Math.min((last ?? FIRST_DELAY_MS / 2) * 2, MAX_DELAY_MS)
}

export function initialState(workers: number, drainMs: number): SupervisorState {
  return { workers, drainMs, phase: 'starting', nextId: 1, live: [], reloadAgain: false, backoff: {}, drained: 0, unclean: false, exitCode: 0 }
}

export interface Transition {
  state: SupervisorState
  effects: Effect[]
}

const log = (level: 'info' | 'warn' | 'error', event: string, fields: Record<string, FieldValue>): Effect => ({ type: 'log', level, event, fields })
const exitFields = (worker: WorkerRecord) => ({ worker: worker.index, pid: { pidOf: worker.id }, code: { codeOf: worker.id }, signal: { signalOf: worker.id } })

/** Starts a process for `index` in `role`. */
function spawn(state: SupervisorState, index: number, role: WorkerRecord['role'], at: number, restarted = false): Transition {
  const id = state.nextId
  const worker: WorkerRecord = { id, index, role, listened: false, startedAt: at, restarted }
  return { state: { ...state, nextId: id + 1, live: [...state.live, worker] }, effects: [{ type: 'spawn', id, index }] }
}

/** Starts the replacement of `index` in a rolling restart. */
function replace(state: SupervisorState, index: number, at: number): Transition {
  const started = spawn(state, index, 'replacement', at)
  const id = started.state.nextId - 1
  return {
    state: { ...started.state, reload: { index, replacement: id } },
    effects: [...started.effects, { type: 'replacement_deadline', id, ms: REPLACEMENT_START_MS }],
  }
}

function startReload(state: SupervisorState, at: number): Transition {
  const begun = replace({ ...state, reloadAgain: false }, 0, at)
  return { state: begun.state, effects: [log('info', 'reload_started', { workers: state.workers }), ...begun.effects] }
}

/** A rolling restart ended (done or failed): another runs if one was asked for meanwhile. */
function endReload(state: SupervisorState, effects: Effect[], at: number): Transition {
  const ended = { ...state, reload: undefined }
  if (!ended.reloadAgain) return { state: ended, effects }
  const again = startReload(ended, at)
  return { state: again.state, effects: [...effects, ...again.effects] }
}

/** Stopping, forced or failed with no process left: the supervisor exits. */
function finishIfEmpty(state: SupervisorState, effects: Effect[]): Transition {
  if (state.live.length > 0) return { state, effects }
  if (state.phase === 'stopping') {
    const clean = !state.unclean
    return { state, effects: [...effects, log('info', 'shutdown_complete', { workers: state.drained, clean }), { type: 'exit', code: clean ? 0 : 1 }] }
  }
  if (state.phase === 'forced') return { state, effects: [...effects, { type: 'exit', code: 1 }] }
  if (state.phase === 'failed') return { state, effects: [...effects, { type: 'exit', code: state.exitCode }] }
  return { state, effects }
}

const servingAll = (state: SupervisorState) =>
  Array.from({ length: state.workers }, (_, index) => state.live.some((worker) => worker.index === index && worker.role === 'serving' && worker.listened)).every(Boolean)

export function transition(state: SupervisorState, event: SupervisorEvent): Transition {
  switch (event.type) {
    case 'start': {
      let next: Transition = { state, effects: [] }
      for (let index = 0; index < state.workers; index++) {
        const started = spawn(next.state, index, 'serving', event.at)
        next = { state: started.state, effects: [...next.effects, ...started.effects] }
      }
      return next
    }

    case 'listening': {
      const worker = state.live.find((candidate) => candidate.id === event.id)
      if (!worker || worker.listened) return { state, effects: [] }
      const listened = { ...worker, listened: true }
      const live = state.live.map((candidate) => (candidate === worker ? listened : candidate))
      const effects: Effect[] = []
      let next: SupervisorState = { ...state, live }
      if (worker.role === 'serving') {
        if (worker.restarted) effects.push(log('info', 'worker_restarted', { worker: worker.index, pid: { pidOf: worker.id } }))
        if (state.phase === 'starting' && servingAll(next)) {
          next = { ...next, phase: 'running' }
          effects.push({ type: 'ready' })
        }
        return { state: next, effects }
      }
      // A rolling restart's replacement: it takes its index, and the worker it replaces drains.
      if (worker.role !== 'replacement' || state.reload?.replacement !== worker.id || state.phase !== 'running') return { state: next, effects }
      const previous = live.find((candidate) => candidate.index === worker.index && candidate.role === 'serving')
      next = {
        ...next,
        live: live.map((candidate) => (candidate.id === worker.id ? { ...listened, role: 'serving' } : candidate === previous ? { ...candidate, role: 'retiring' } : candidate)),
      }
      if (previous) effects.push({ type: 'kill', id: previous.id, signal: 'SIGTERM' })
      effects.push(log('info', 'worker_replaced', { worker: worker.index, pid: { pidOf: worker.id }, ...(previous ? { previousPid: { pidOf: previous.id } } : {}) }))
      if (worker.index + 1 < state.workers) {
        const following = replace(next, worker.index + 1, event.at)
        return { state: following.state, effects: [...effects, ...following.effects] }
      }
      effects.push(log('info', 'reload_complete', { workers: state.workers }))
      return endReload(next, effects, event.at)
    }

    case 'exited': {
      const worker = state.live.find((candidate) => candidate.id === event.id)
      if (!worker) return { state, effects: [] }
      const live = state.live.filter((candidate) => candidate !== worker)
      const gone = { ...state, live }
      if (state.phase === 'stopping' || state.phase === 'forced' || state.phase === 'failed') {
        return finishIfEmpty({ ...gone, unclean: state.unclean || (worker.listened && event.code !== 0) }, [])
      }
      if (worker.role === 'retiring') return { state: gone, effects: [log('info', 'worker_stopped', exitFields(worker))] }
      if (worker.role === 'replacement') {
        // Given up on already (its deadline passed): nothing more to say.
        if (state.reload?.replacement !== worker.id) return { state: gone, effects: [] }
        return endReload(gone, [log('error', 'reload_failed', exitFields(worker))], event.at)
      }
      if (state.phase === 'starting' && !worker.listened && event.code !== null) {
        // A worker that cannot start (the port, the data directory: it exits with a status): the
        // service cannot either. One killed by a signal (the OOM killer, an operator, perhaps
        // after it listened but before its message arrived) is restarted like any other death.
        const failed: SupervisorState = { ...gone, phase: 'failed', exitCode: event.code === 0 ? 1 : event.code }
        const effects: Effect[] = [log('error', 'worker_failed_to_start', exitFields(worker)), ...live.map((other): Effect => ({ type: 'kill', id: other.id, signal: 'SIGTERM' }))]
        return finishIfEmpty(failed, effects)
      }
      const delayMs = restartDelay(state.backoff[worker.index], event.at - worker.startedAt)
      return {
        state: { ...gone, backoff: { ...state.backoff, [worker.index]: delayMs } },
        effects: [log('error', 'worker_exited', { ...exitFields(worker), restartInMs: delayMs }), { type: 'restart_after', index: worker.index, delayMs }],
      }
    }

    case 'restart_due': {
      // Stopping, or a rolling restart has given the index a worker meanwhile.
      if ((state.phase !== 'running' && state.phase !== 'starting') || state.live.some((worker) => worker.index === event.index && worker.role === 'serving')) {
        return { state, effects: [] }
      }
      const started = spawn(state, event.index, 'serving', event.at, true)
      return { state: started.state, effects: [...started.effects, { type: 'restarted' }] }
    }

    case 'replacement_timeout': {
      const worker = state.live.find((candidate) => candidate.id === event.id)
      if (!worker || worker.listened || state.reload?.replacement !== event.id) return { state, effects: [] }
      // Stuck opening the data directory, say: it must not hold every later SIGHUP back; the old worker serves on.
      const effects: Effect[] = [
        { type: 'kill', id: worker.id, signal: 'SIGKILL' },
        log('error', 'reload_failed', { ...exitFields(worker), reason: `not listening after ${REPLACEMENT_START_MS / 1000} s` }),
      ]
      return endReload(state, effects, event.at)
    }

    case 'reload': {
      if (state.phase !== 'running') return { state, effects: [] }
      if (state.reload) return { state: { ...state, reloadAgain: true }, effects: [] }
      return startReload(state, event.at)
    }

    case 'stop': {
      if (state.phase === 'starting' || state.phase === 'running') {
        // Once to each worker. A retiring one drains already: signalled again it would take it
        // as a second signal and stop without draining.
        const stopping: SupervisorState = {
          ...state,
          phase: 'stopping',
          reload: undefined,
          reloadAgain: false,
          drained: state.live.filter((worker) => worker.listened).length,
        }
        const effects: Effect[] = [
          log('info', 'shutdown_started', { signal: event.signal, workers: state.live.length, drainMs: state.drainMs }),
          ...state.live.filter((worker) => worker.role !== 'retiring').map((worker): Effect => ({ type: 'kill', id: worker.id, signal: event.signal })),
        ]
        return finishIfEmpty(stopping, effects)
      }
      // A second signal (or one while failing): passed on to every worker, so that all stop at once.
      const effects: Effect[] = [log('warn', 'shutdown_forced', { signal: event.signal }), ...state.live.map((worker): Effect => ({ type: 'kill', id: worker.id, signal: event.signal }))]
      return finishIfEmpty({ ...state, phase: state.phase === 'failed' ? 'failed' : 'forced' }, effects)
    }
  }
}
