import type { Subprocess } from 'bun'
import { shownUrl, type Config } from '../config/config.ts'
import type { Logger } from '../logger.ts'
import { isListeningMessage } from './worker-messages.ts'
import { relayLines } from './log-relay.ts'
import { initialState, transition, type Effect, type FieldValue, type SupervisorEvent } from './supervisor-states.ts'

/**
 * The supervisor: the process you start serves nothing itself. It checks the port, starts
 * WORKERS server processes (one by default) that share the port (reusePort: the kernel spreads
 * connections over them) and the data directory, passes their log lines on, restarts a worker
 * that dies, replaces every worker one by one on SIGHUP (a rolling restart), and on
 * SIGTERM/SIGINT lets every worker drain before it exits. More than one worker shares the
 * limits through Redis (the configuration refuses WORKERS > 1 without REDIS_URL).
 */

const WORKER_FLAG = '--worker='
const SUPERVISOR_FLAG = '--supervisor='

const flagValue = (argv: readonly string[], flag: string) => {
  const arg = argv.find((candidate) => candidate.startsWith(flag))
  return arg === undefined ? undefined : Number(arg.slice(flag.length))
}

/** The index of this process among the workers, or undefined in the supervisor. */
export function workerIndex(argv: readonly string[] = process.argv): number | undefined {
  return flagValue(argv, WORKER_FLAG)
}

/** In a worker: the pid of the supervisor that started it. */
export function supervisorPid(argv: readonly string[] = process.argv): number | undefined {
  return flagValue(argv, SUPERVISOR_FLAG)
}

export interface SupervisorOptions {
  config: Config
  logger: Logger
  /** The entry file a worker runs (src/main.ts). */
  entry: string
  /** Writes the parent's buffered log lines out (before it exits). */
  flush: () => void
  /**
   * The port the workers share: the caller has checked it with an exclusive bind (another
   * program's reusePort listener would let a reusePort bind through), and PORT=0 has become the
   * port that check was given.
   */
  port: number
  /** Called once with the shared port before the workers start (the first start's sample organisation). */
  beforeStart?: (port: number) => void
  /** Called once every worker listens: the start-up line (src/server/start-line.ts). */
  started?: (port: number) => void
  /**
   * Told when a worker process starts (with a way to send to it), what it sends, and when it
   * exits; each process is known by its pid, since during a rolling restart two processes hold
   * one index. The metrics use it to ask every worker for its counts (src/metrics/across-workers.ts).
   */
  channel?: WorkerChannel
  /** Told each time a worker that died is started again (not a rolling restart's replacement). */
  restarted?: () => void
}

/** The parent's side of the IPC channels to its workers, each known by its pid. */
export interface WorkerChannel {
  opened(pid: number, send: (message: unknown) => void): void
  received(pid: number, message: unknown): void
  closed(pid: number): void
}

/**
 * Runs the workers until a signal ends them; exits the process (0 when every worker drained,
 * 1 otherwise, a worker's own status when one could not start). What to do on each event is
 * decided by `transition` (./supervisor-states.ts); this function carries it out.
 */
export async function superviseWorkers(options: SupervisorOptions): Promise<never> {
  const { config, logger, port, channel } = options
  options.beforeStart?.(port)

  let state = initialState(config.workers, config.shutdownDrainMs)
  /** The process of each worker id the state names. */
  const children = new Map<number, Subprocess<'ignore', 'pipe', 'inherit'>>()

  const dispatch = (event: SupervisorEvent) => {
    const next = transition(state, event)
    state = next.state
    for (const effect of next.effects) carryOut(effect)
  }

  const resolve = (value: FieldValue): unknown => {
    if (typeof value !== 'object') return value
    const child = children.get('pidOf' in value ? value.pidOf : 'codeOf' in value ? value.codeOf : value.signalOf)
    if ('pidOf' in value) return child?.pid
    if ('codeOf' in value) return child?.exitCode ?? null
    return child?.signalCode ?? null
  }

  const spawn = (id: number, index: number) => {
    const child = Bun.spawn([process.execPath, options.entry, `${WORKER_FLAG}${index}`, `${SUPERVISOR_FLAG}${process.pid}`], {
      env: { ...process.env, PORT: String(port) },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'inherit',
      // A session of its own: a terminal's Ctrl-C or hangup reaches the supervisor alone, which
      // passes a stop on once (a worker taking the same signal twice would stop without draining).
      detached: true,
      serialization: 'json',
      ipc(message) {
        if (isListeningMessage(message)) dispatch({ type: 'listening', id, at: Date.now() })
        else channel?.received(child.pid, message)
      },
    })
    children.set(id, child)
    channel?.opened(child.pid, (message) => child.send(message))
    logger.info('worker_started', { worker: index, pid: child.pid })
    void relayLines(child.stdout)
    void child.exited.then(() => {
      channel?.closed(child.pid)
      dispatch({ type: 'exited', id, code: child.exitCode, at: Date.now() })
      children.delete(id)
    })
  }

  const carryOut = (effect: Effect) => {
    switch (effect.type) {
      case 'spawn':
        return spawn(effect.id, effect.index)
      case 'kill':
        return void children.get(effect.id)?.kill(effect.signal)
      case 'restart_after':
        return void setTimeout(() => dispatch({ type: 'restart_due', index: effect.index, at: Date.now() }), effect.delayMs)
      case 'replacement_deadline':
        return void setTimeout(() => dispatch({ type: 'replacement_timeout', id: effect.id, at: Date.now() }), effect.ms).unref()
      case 'log':
        return logger[effect.level](effect.event, Object.fromEntries(Object.entries(effect.fields).map(([name, value]) => [name, resolve(value)])))
      case 'ready':
        logger.info('listening', { url: shownUrl(config.host, port), workers: config.workers })
        return options.started?.(port)
      case 'restarted':
        return options.restarted?.()
      case 'exit':
        options.flush()
        return process.exit(effect.code)
    }
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => dispatch({ type: 'stop', signal }))
  process.on('SIGHUP', () => dispatch({ type: 'reload', at: Date.now() }))
  dispatch({ type: 'start', at: Date.now() })
  // The workers and the signal handlers keep the process alive from here.
  return new Promise<never>(() => {})
}

/**
 * In a worker: calls `onOrphaned` once when its supervisor is gone (killed by any signal, kill -9
 * included, so that it could pass nothing on), instead of serving unwatched. The IPC channel
 * closing says so at once; the parent pid is checked too, every `everyMs`, for a channel that
 * was never open. `parent` is the pid the supervisor gave, not process.ppid, which may already
 * have changed by the time this runs.
 */
export function stopWhenOrphaned(parent: number, onOrphaned: () => void, everyMs = 250): void {
  let told = false
  const orphaned = () => {
    if (told) return
    told = true
    clearInterval(timer)
    onOrphaned()
  }
  const check = () => {
    if (process.ppid !== parent || (process.send !== undefined && process.connected === false)) orphaned()
  }
  const timer = setInterval(check, everyMs)
  timer.unref()
  process.once('disconnect', orphaned)
  check()
}
