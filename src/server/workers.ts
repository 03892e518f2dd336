import type { Subprocess } from 'bun'
import { shownUrl, type Config } from '../config/config.ts'
import type { Logger } from '../logger.ts'
import { isListeningMessage } from './worker-messages.ts'
import { relayLines } from './log-relay.ts'
import { RestartBackoff } from './restart-backoff.ts'

/**
 * The supervisor: the process you start serves nothing itself. It checks the port, starts
 * WORKERS server processes (one by default) that share the port (reusePort: the kernel spreads
 * connections over them) and the data directory, passes their log lines on, restarts a worker
 * that dies, replaces every worker one by one on SIGHUP (a rolling restart), and on
 * SIGTERM/SIGINT lets every worker drain before it exits. More than one worker shares the
 * limits through Redis (the configuration refuses WORKERS > 1 without REDIS_URL).
 */

/** How long a rolling restart waits for a replacement to listen before it gives up on it. */
const REPLACEMENT_START_MS = 60_000

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

/** One worker process, from its start to its exit. */
interface Worker {
  index: number
  child: Subprocess<'ignore', 'pipe', 'inherit'>
  startedAt: number
  /** Holds its index: started at start-up or after a death, or a rolling restart's replacement once it listens. */
  adopted: boolean
  /** Replaced by a rolling restart: draining, its exit expected. */
  retiring: boolean
  /** Resolves true when the worker says it listens, false when it exits before. */
  listening: Promise<boolean>
  /** It said it listens. */
  listened: boolean
}

/**
 * Runs the workers until a signal ends them; exits the process (0 when every worker drained,
 * 1 otherwise, a worker's own status when one could not start).
 */
export async function superviseWorkers(options: SupervisorOptions): Promise<never> {
  const { config, logger, port, channel } = options
  options.beforeStart?.(port)

  /** The worker serving each index. */
  const serving: (Worker | undefined)[] = []
  /** Every live worker process: serving, retiring, or a replacement not yet listening. */
  const live = new Set<Worker>()
  const backoff = new RestartBackoff()
  let stopping = false
  let started = false

  const spawn = (index: number, adopted: boolean): Worker => {
    let heard = (_listening: boolean) => {}
    const listening = new Promise<boolean>((resolve) => (heard = resolve))
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
        if (isListeningMessage(message)) {
          worker.listened = true
          heard(true)
        } else channel?.received(child.pid, message)
      },
    })
    const worker: Worker = { index, child, startedAt: Date.now(), adopted, retiring: false, listening, listened: false }
    live.add(worker)
    channel?.opened(child.pid, (message) => child.send(message))
    logger.info('worker_started', { worker: index, pid: child.pid })
    void relayLines(child.stdout)
    void child.exited.then((code) => {
      heard(false)
      live.delete(worker)
      channel?.closed(child.pid)
      exited(worker, code)
    })
    return worker
  }

  const exited = (worker: Worker, code: number) => {
    const { index, child } = worker
    const fields = { worker: index, pid: child.pid, code, signal: child.signalCode }
    if (serving[index] === worker) serving[index] = undefined
    if (stopping) return
    if (worker.retiring) return logger.info('worker_stopped', fields)
    // A rolling restart's replacement that never listened: the restart reports it and keeps the old one.
    if (!worker.adopted) return
    if (!started && !worker.listened) {
      // A worker that cannot start (the port, the data directory): the service cannot either.
      logger.error('worker_failed_to_start', fields)
      void stopAll('SIGTERM').then(() => exit(code === 0 ? 1 : code))
      return
    }
    const delay = backoff.next(index, Date.now() - worker.startedAt)
    logger.error('worker_exited', { ...fields, restartInMs: delay })
    setTimeout(() => {
      // Stopping, or a rolling restart has given the index a worker meanwhile.
      if (stopping || serving[index]) return
      const replacement = spawn(index, true)
      serving[index] = replacement
      options.restarted?.()
      void replacement.listening.then((ok) => ok && logger.info('worker_restarted', { worker: index, pid: replacement.child.pid }))
    }, delay)
  }

  /**
   * SIGHUP: each worker in turn is replaced by a new process (which reads the code and the files
   * anew); the old one is told to drain only once the new one listens beside it on the port.
   * A replacement that cannot start ends the rolling restart there, the old worker still serving.
   */
  let reloading = false
  let reloadAgain = false
  const rollingRestart = async () => {
    if (reloading) {
      reloadAgain = true // a reload asked for during one: the code may have changed again since
      return
    }
    reloading = true
    logger.info('reload_started', { workers: config.workers })
    try {
      for (let index = 0; index < config.workers; index++) {
        if (stopping) return
        const replacement = spawn(index, false)
        // A replacement that neither listens nor exits (stuck opening the data directory, say)
        // must not hold every later SIGHUP back: it is stopped, and the old worker serves on.
        const listening = await Promise.race([replacement.listening, Bun.sleep(REPLACEMENT_START_MS).then(() => 'timeout' as const)])
        if (listening !== true) {
          if (stopping) return // ended by the shutdown, not by a failure of its own
          if (listening === 'timeout') replacement.child.kill('SIGKILL')
          const why = listening === 'timeout' ? { reason: `not listening after ${REPLACEMENT_START_MS / 1000} s` } : {}
          logger.error('reload_failed', { worker: index, pid: replacement.child.pid, code: replacement.child.exitCode, signal: replacement.child.signalCode, ...why })
          return
        }
        if (stopping) return // stopAll reaches it too
        const previous = serving[index]
        replacement.adopted = true
        serving[index] = replacement
        if (previous) {
          previous.retiring = true
          previous.child.kill('SIGTERM')
        }
        logger.info('worker_replaced', { worker: index, pid: replacement.child.pid, previousPid: previous?.child.pid })
      }
      logger.info('reload_complete', { workers: config.workers })
    } finally {
      reloading = false
      if (reloadAgain && !stopping) {
        reloadAgain = false
        void rollingRestart()
      }
    }
  }

  /**
   * Signals the live workers and resolves, once all have exited, with those that had listened (a
   * replacement still starting has nothing to drain). A worker a rolling restart retired is
   * draining already: signalled again it would take it as a second signal and stop without
   * draining, so only `forced` reaches it.
   */
  const stopAll = async (signal: NodeJS.Signals, { forced = false } = {}) => {
    const workers = [...live]
    for (const { child, retiring } of workers) if (forced || !retiring) child.kill(signal)
    await Promise.all(workers.map(({ child }) => child.exited))
    return workers.filter((worker) => worker.listened)
  }

  const exit = (code: number): never => {
    options.flush()
    process.exit(code)
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) {
        // A second signal: passed on, so that every worker stops at once too.
        logger.warn('shutdown_forced', { signal })
        void stopAll(signal, { forced: true }).then(() => exit(1))
        return
      }
      stopping = true
      logger.info('shutdown_started', { signal, workers: live.size, drainMs: config.shutdownDrainMs })
      void stopAll(signal).then((drained) => {
        const clean = drained.every(({ child }) => child.exitCode === 0)
        logger.info('shutdown_complete', { workers: drained.length, clean })
        exit(clean ? 0 : 1)
      })
    })
  }
  process.on('SIGHUP', () => {
    if (!stopping && started) void rollingRestart()
  })

  for (let index = 0; index < config.workers; index++) serving[index] = spawn(index, true)
  const all = await Promise.all(serving.map((worker) => worker!.listening))
  // One that exited before it listened is handled by its exit (the service stops).
  if (all.every(Boolean)) {
    started = true
    logger.info('listening', { url: shownUrl(config.host, port), workers: config.workers })
    options.started?.(port)
  }
  // The workers and the signal handlers keep the process alive from here.
  return new Promise<never>(() => {})
}

/**
 * In a worker: when its supervisor is gone (killed without passing a signal on), shuts down as on
 * SIGTERM instead of serving unwatched. `parent` is the pid the supervisor gave, not
 * process.ppid, which may already have changed by the time this runs.
 */
export function stopWhenOrphaned(parent: number, onOrphaned: () => void, everyMs = 1000): void {
  const check = () => {
    if (process.ppid === parent) return
    clearInterval(timer)
    onOrphaned()
  }
  const timer = setInterval(check, everyMs)
  timer.unref()
  check()
}
