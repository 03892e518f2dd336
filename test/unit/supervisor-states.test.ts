import { describe, expect, test } from 'bun:test'
import { initialState, REPLACEMENT_START_MS, restartDelay, transition, type Effect, type SupervisorEvent, type SupervisorState } from '../../src/server/supervisor-states.ts'

/**
 * Each transition of the supervisor (src/server/supervisor-states.ts) on its own: the state it
 * leads to and the effects it asks for. The processes themselves are test/reliability/rolling-restart.test.ts's.
 */

/** Runs `events` from `state`, returning the last state and every effect in order. */
function run(state: SupervisorState, ...events: SupervisorEvent[]): { state: SupervisorState; effects: Effect[] } {
  const effects: Effect[] = []
  for (const event of events) {
    const next = transition(state, event)
    state = next.state
    effects.push(...next.effects)
  }
  return { state, effects }
}

/** The effects in a short form: `spawn 1 0`, `kill 1 SIGTERM`, `log worker_exited`, `exit 0`… */
const brief = (effects: Effect[]) =>
  effects.map((effect) => {
    switch (effect.type) {
      case 'spawn':
        return `spawn ${effect.id} ${effect.index}`
      case 'kill':
        return `kill ${effect.id} ${effect.signal}`
      case 'restart_after':
        return `restart ${effect.index} in ${effect.delayMs}`
      case 'replacement_deadline':
        return `deadline ${effect.id}`
      case 'log':
        return `log ${effect.event}`
      case 'exit':
        return `exit ${effect.code}`
      default:
        return effect.type
    }
  })

const roles = (state: SupervisorState) => state.live.map((worker) => `${worker.id}:${worker.index}:${worker.role}${worker.listened ? '' : '?'}`)

const at = 1_000
/** Two workers (ids 1 and 2), both listening. */
const running = () => run(initialState(2, 30_000), { type: 'start', at }, { type: 'listening', id: 1, at }, { type: 'listening', id: 2, at }).state

describe('starting', () => {
  test('start: one serving worker per index', () => {
    const { state, effects } = run(initialState(2, 30_000), { type: 'start', at })
    expect(brief(effects)).toEqual(['spawn 1 0', 'spawn 2 1'])
    expect(state.phase).toBe('starting')
    expect(roles(state)).toEqual(['1:0:serving?', '2:1:serving?'])
  })

  test('listening: running once every index listens, and ready said once', () => {
    const first = run(initialState(2, 30_000), { type: 'start', at }, { type: 'listening', id: 1, at })
    expect(first.state.phase).toBe('starting')
    expect(brief(first.effects)).not.toContain('ready')
    const both = run(first.state, { type: 'listening', id: 2, at }, { type: 'listening', id: 2, at })
    expect(both.state.phase).toBe('running')
    expect(brief(both.effects)).toEqual(['ready'])
  })

  test('a worker exiting with a status before it listens: failed, the others stopped, exit with its status (1 for 0)', () => {
    const failed = run(initialState(2, 30_000), { type: 'start', at }, { type: 'exited', id: 1, code: 2, at })
    expect(failed.state.phase).toBe('failed')
    expect(brief(failed.effects)).toEqual(['spawn 1 0', 'spawn 2 1', 'log worker_failed_to_start', 'kill 2 SIGTERM'])
    expect(brief(run(failed.state, { type: 'exited', id: 2, code: 0, at }).effects)).toEqual(['exit 2'])
    const zero = run(initialState(1, 30_000), { type: 'start', at }, { type: 'exited', id: 1, code: 0, at })
    expect(brief(zero.effects)).toEqual(['spawn 1 0', 'log worker_failed_to_start', 'exit 1'])
  })

  test('a worker killed by a signal before its listening was heard (it may have listened already): restarted, the start goes on', () => {
    const killed = run(initialState(2, 30_000), { type: 'start', at }, { type: 'listening', id: 2, at }, { type: 'exited', id: 1, code: null, at })
    expect(killed.state.phase).toBe('starting')
    expect(brief(killed.effects).slice(-2)).toEqual(['log worker_exited', 'restart 0 in 100'])
    const restarted = run(killed.state, { type: 'restart_due', index: 0, at }, { type: 'listening', id: 3, at })
    expect(restarted.state.phase).toBe('running')
    expect(brief(restarted.effects)).toEqual(['spawn 3 0', 'restarted', 'log worker_restarted', 'ready'])
  })

  test('failed: a stop signal is passed to what is left, and the exit status stays the failed worker\'s', () => {
    const failed = run(initialState(2, 30_000), { type: 'start', at }, { type: 'exited', id: 1, code: 3, at }, { type: 'stop', signal: 'SIGTERM' })
    expect(brief(failed.effects).slice(-2)).toEqual(['log shutdown_forced', 'kill 2 SIGTERM'])
    expect(brief(run(failed.state, { type: 'exited', id: 2, code: 0, at }).effects)).toEqual(['exit 3'])
  })

  test('SIGHUP before every worker listens: ignored', () => {
    const { state, effects } = run(initialState(1, 30_000), { type: 'start', at }, { type: 'reload', at })
    expect(brief(effects)).toEqual(['spawn 1 0'])
    expect(state.reload).toBeUndefined()
  })
})

describe('a worker that dies while running', () => {
  test('logged with its restart delay, restarted when the delay is due, worker_restarted once it listens', () => {
    const died = run(running(), { type: 'exited', id: 1, code: 1, at: at + 60_000 })
    expect(brief(died.effects)).toEqual(['log worker_exited', 'restart 0 in 100'])
    expect(died.state.phase).toBe('running')
    const due = run(died.state, { type: 'restart_due', index: 0, at: at + 60_100 })
    expect(brief(due.effects)).toEqual(['spawn 3 0', 'restarted'])
    expect(brief(run(due.state, { type: 'listening', id: 3, at }).effects)).toEqual(['log worker_restarted'])
  })

  test('dying again soon: the delay doubles, up to 5 s; a worker that lived 5 s starts at 100 ms again', () => {
    expect(restartDelay(undefined, 10)).toBe(100)
    expect(restartDelay(100, 10)).toBe(200)
    expect(restartDelay(4_000, 10)).toBe(5_000)
    expect(restartDelay(5_000, 10)).toBe(5_000)
    expect(restartDelay(5_000, 5_000)).toBe(100)
    const first = run(running(), { type: 'exited', id: 1, code: 1, at: at + 10 }, { type: 'restart_due', index: 0, at: at + 200 })
    const again = run(first.state, { type: 'exited', id: 3, code: 1, at: at + 300 })
    expect(brief(again.effects)).toEqual(['log worker_exited', 'restart 0 in 200'])
  })

  test('a restart due while stopping, or for an index a rolling restart filled meanwhile: nothing', () => {
    const died = run(running(), { type: 'exited', id: 1, code: 1, at })
    expect(brief(run(died.state, { type: 'stop', signal: 'SIGTERM' }, { type: 'restart_due', index: 0, at }).effects)).not.toContain('spawn 3 0')
    // SIGHUP while index 0 waits: the replacement takes index 0, the restart then has nothing to do.
    const filled = run(died.state, { type: 'reload', at }, { type: 'listening', id: 3, at })
    expect(brief(run(filled.state, { type: 'restart_due', index: 0, at }).effects)).toEqual([])
  })
})

describe('SIGHUP: a rolling restart', () => {
  test('each index in turn: a replacement, adopted once it listens, the old worker told to drain; then reload_complete', () => {
    const started = run(running(), { type: 'reload', at })
    expect(brief(started.effects)).toEqual(['log reload_started', 'spawn 3 0', 'deadline 3'])
    const first = run(started.state, { type: 'listening', id: 3, at })
    expect(brief(first.effects)).toEqual(['kill 1 SIGTERM', 'log worker_replaced', 'spawn 4 1', 'deadline 4'])
    expect(roles(first.state)).toEqual(['1:0:retiring', '2:1:serving', '3:0:serving', '4:1:replacement?'])
    const second = run(first.state, { type: 'listening', id: 4, at })
    expect(brief(second.effects)).toEqual(['kill 2 SIGTERM', 'log worker_replaced', 'log reload_complete'])
    expect(second.state.reload).toBeUndefined()
    // The old workers' exits are expected: worker_stopped, no restart.
    expect(brief(run(second.state, { type: 'exited', id: 1, code: 0, at }, { type: 'exited', id: 2, code: 0, at }).effects)).toEqual(['log worker_stopped', 'log worker_stopped'])
  })

  test('a replacement that exits before it listens: reload_failed, the old worker serves on, the next SIGHUP starts over', () => {
    const failed = run(running(), { type: 'reload', at }, { type: 'exited', id: 3, code: 1, at })
    expect(brief(failed.effects).slice(-1)).toEqual(['log reload_failed'])
    expect(failed.state.reload).toBeUndefined()
    expect(roles(failed.state)).toEqual(['1:0:serving', '2:1:serving'])
    expect(brief(run(failed.state, { type: 'reload', at }).effects)).toEqual(['log reload_started', 'spawn 4 0', 'deadline 4'])
  })

  test(`a replacement not listening after ${REPLACEMENT_START_MS / 1000} s: killed, reload_failed; its later exit and listening change nothing`, () => {
    const timedOut = run(running(), { type: 'reload', at }, { type: 'replacement_timeout', id: 3, at })
    expect(brief(timedOut.effects).slice(-2)).toEqual(['kill 3 SIGKILL', 'log reload_failed'])
    expect(timedOut.state.reload).toBeUndefined()
    const later = run(timedOut.state, { type: 'listening', id: 3, at }, { type: 'exited', id: 3, code: null, at })
    expect(brief(later.effects)).toEqual([])
    expect(roles(later.state)).toEqual(['1:0:serving', '2:1:serving'])
    // A deadline of a replacement that listened in time: nothing.
    const listened = run(running(), { type: 'reload', at }, { type: 'listening', id: 3, at }, { type: 'replacement_timeout', id: 3, at })
    expect(brief(listened.effects)).not.toContain('kill 3 SIGKILL')
  })

  test('SIGHUP during one: another runs after it (once, however many came); after a failure too', () => {
    const twice = run(running(), { type: 'reload', at }, { type: 'reload', at }, { type: 'reload', at }, { type: 'listening', id: 3, at }, { type: 'listening', id: 4, at })
    expect(brief(twice.effects).filter((effect) => effect.startsWith('log reload_'))).toEqual(['log reload_started', 'log reload_complete', 'log reload_started'])
    expect(twice.state.reload).toEqual({ index: 0, replacement: 5 })
    expect(twice.state.reloadAgain).toBe(false)
    const afterFailure = run(running(), { type: 'reload', at }, { type: 'reload', at }, { type: 'exited', id: 3, code: 1, at })
    expect(brief(afterFailure.effects).slice(-4)).toEqual(['log reload_failed', 'log reload_started', 'spawn 4 0', 'deadline 4'])
  })

  test('a serving worker that dies during one is restarted as usual', () => {
    const { effects } = run(running(), { type: 'reload', at }, { type: 'exited', id: 2, code: 1, at })
    expect(brief(effects).slice(-2)).toEqual(['log worker_exited', 'restart 1 in 100'])
  })
})

describe('SIGTERM / SIGINT', () => {
  test('passed on once to each worker; exit 0 once every worker that listened exited 0', () => {
    const stopping = run(running(), { type: 'stop', signal: 'SIGTERM' })
    expect(stopping.state.phase).toBe('stopping')
    expect(brief(stopping.effects)).toEqual(['log shutdown_started', 'kill 1 SIGTERM', 'kill 2 SIGTERM'])
    expect(brief(run(stopping.state, { type: 'exited', id: 1, code: 0, at }).effects)).toEqual([])
    expect(brief(run(stopping.state, { type: 'exited', id: 1, code: 0, at }, { type: 'exited', id: 2, code: 0, at }).effects)).toEqual(['log shutdown_complete', 'exit 0'])
  })

  test('a worker that exits otherwise (a status, a signal): exit 1; one still starting (nothing to drain) does not count', () => {
    const stopping = run(running(), { type: 'stop', signal: 'SIGINT' })
    expect(brief(run(stopping.state, { type: 'exited', id: 1, code: null, at }, { type: 'exited', id: 2, code: 0, at }).effects)).toEqual(['log shutdown_complete', 'exit 1'])
    const duringReload = run(running(), { type: 'reload', at }, { type: 'stop', signal: 'SIGTERM' })
    expect(brief(duringReload.effects).slice(-3)).toEqual(['kill 1 SIGTERM', 'kill 2 SIGTERM', 'kill 3 SIGTERM'])
    expect(brief(run(duringReload.state, { type: 'exited', id: 3, code: null, at }, { type: 'exited', id: 1, code: 0, at }, { type: 'exited', id: 2, code: 0, at }).effects)).toEqual(['log shutdown_complete', 'exit 0'])
  })

  test('a retiring worker (drain of a rolling restart) is not signalled again; its exit is waited for', () => {
    const retired = run(running(), { type: 'reload', at }, { type: 'listening', id: 3, at }, { type: 'listening', id: 4, at })
    const stopping = run(retired.state, { type: 'stop', signal: 'SIGTERM' })
    expect(brief(stopping.effects)).toEqual(['log shutdown_started', 'kill 3 SIGTERM', 'kill 4 SIGTERM'])
    const allBut = run(stopping.state, { type: 'exited', id: 3, code: 0, at }, { type: 'exited', id: 4, code: 0, at }, { type: 'exited', id: 2, code: 0, at })
    expect(brief(allBut.effects)).toEqual([])
    expect(brief(run(allBut.state, { type: 'exited', id: 1, code: 0, at }).effects)).toEqual(['log shutdown_complete', 'exit 0'])
  })

  test('a second signal: forced, passed to every worker (retiring too), exit 1; SIGHUP meanwhile ignored', () => {
    const retired = run(running(), { type: 'reload', at }, { type: 'listening', id: 3, at })
    const forced = run(retired.state, { type: 'stop', signal: 'SIGTERM' }, { type: 'reload', at }, { type: 'stop', signal: 'SIGTERM' })
    expect(forced.state.phase).toBe('forced')
    expect(brief(forced.effects).slice(-5)).toEqual(['log shutdown_forced', 'kill 1 SIGTERM', 'kill 2 SIGTERM', 'kill 3 SIGTERM', 'kill 4 SIGTERM'])
    const gone = run(forced.state, ...[1, 2, 3, 4].map((id): SupervisorEvent => ({ type: 'exited', id, code: 0, at })))
    expect(brief(gone.effects)).toEqual(['exit 1'])
  })

  test('no worker alive (all waiting on a restart): exit 0 at once', () => {
    const { effects } = run(initialState(1, 30_000), { type: 'start', at }, { type: 'listening', id: 1, at }, { type: 'exited', id: 1, code: 1, at }, { type: 'stop', signal: 'SIGTERM' })
    expect(brief(effects).slice(-3)).toEqual(['log shutdown_started', 'log shutdown_complete', 'exit 0'])
  })

  test('while starting: the workers are stopped, and the exit is 0 once they exit 0', () => {
    const { state, effects } = run(initialState(1, 30_000), { type: 'start', at }, { type: 'stop', signal: 'SIGTERM' }, { type: 'listening', id: 1, at })
    expect(brief(effects)).toEqual(['spawn 1 0', 'log shutdown_started', 'kill 1 SIGTERM'])
    expect(brief(run(state, { type: 'exited', id: 1, code: 0, at }).effects)).toEqual(['log shutdown_complete', 'exit 0'])
  })
})

test('events about a process the state does not know change nothing', () => {
  const state = running()
  for (const event of [{ type: 'listening', id: 99, at }, { type: 'exited', id: 99, code: 0, at }, { type: 'replacement_timeout', id: 99, at }] as SupervisorEvent[]) {
    expect(transition(state, event)).toEqual({ state, effects: [] })
  }
})
