import type { Subprocess } from 'bun'
import type { Config } from '../config/config.ts'
import type { Logger } from '../logger.ts'
import { shownUrl } from './shown-url.ts'

/**
 * WORKERS=N: the parent process starts N server processes (workers) that share the port
 * (reusePort: the kernel spreads connections over them) and the data directory; the limits are
 * shared through Redis (the configuration refuses N > 1 without REDIS_URL). The parent serves
 * nothing itself: it checks the port, starts the workers, passes their log lines on, restarts
 * a worker that dies, and on SIGTERM/SIGINT lets every worker drain before it exits.
 */

const WORKER_FLAG = '--worker='

/** The index of this process among the workers, or undefined in the parent or a lone server. */
export function workerIndex(argv: readonly string[] = process.argv): number | undefined {
  const flag = argv.find((arg) => arg.startsWith(WORKER_FLAG))
  return flag === undefined ? undefined : Number(flag.slice(WORKER_FLAG.length))
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
  /**
   * Given: each worker is started with an IPC channel (JSON messages) and the channel is told
   * when a worker starts (with a way to send to it), what it sends, and when it exits. The
   * metrics use it to ask every worker for its counts (src/metrics/across-workers.ts).
   */
  channel?: WorkerChannel
}

/** The parent's side of the IPC channels to its workers. */
export interface WorkerChannel {
  opened(index: number, send: (message: unknown) => void): void
  received(index: number, message: unknown): void
  closed(index: number): void
}

/** A worker that lived at least this long is restarted at once; one that died sooner waits, doubling. */
const STABLE_MS = 5_000
const FIRST_RESTART_DELAY_MS = 100
const MAX_RESTART_DELAY_MS = 5_000

/**
 * Runs the workers until a signal ends them; exits the process (0 when every worker drained,
 * 1 otherwise, 2 when the port is taken or a worker could not start).
 */
export async function superviseWorkers(options: SupervisorOptions): Promise<never> {
  const { config, logger, port } = options
  options.beforeStart?.(port)

  const workers: (Subprocess<'ignore', 'pipe', 'inherit'> | undefined)[] = []
  let stopping = false
  let started = false
  const restartDelay: number[] = []

  const spawn = (index: number): Promise<void> => {
    const startedAt = Date.now()
    const { channel } = options
    const child = Bun.spawn([process.execPath, options.entry, `${WORKER_FLAG}${index}`], {
      env: { ...process.env, PORT: String(port) },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'inherit',
      ...(channel ? { serialization: 'json' as const, ipc: (message: unknown) => channel.received(index, message) } : {}),
    })
    workers[index] = child
    channel?.opened(index, (message) => child.send(message))
    logger.info('worker_started', { worker: index, pid: child.pid })
    const listening = relayLines(child.stdout)
    void child.exited.then((code) => {
      if (workers[index] === child) workers[index] = undefined
      channel?.closed(index)
      if (stopping) return
      if (!started) {
        // A worker that cannot start (the port, the data directory): the service cannot either.
        logger.error('worker_failed_to_start', { worker: index, pid: child.pid, code, signal: child.signalCode })
        void stopAll('SIGTERM').then(() => exit(code === 0 ? 1 : code))
        return
      }
      const lived = Date.now() - startedAt
      const delay = lived >= STABLE_MS ? FIRST_RESTART_DELAY_MS : Math.min((restartDelay[index] ?? FIRST_RESTART_DELAY_MS / 2) * 2, MAX_RESTART_DELAY_MS)
      restartDelay[index] = delay
      logger.error('worker_exited', { worker: index, pid: child.pid, code, signal: child.signalCode, restartInMs: delay })
      setTimeout(() => {
        if (stopping) return
        void spawn(index).then(() => logger.info('worker_restarted', { worker: index, pid: workers[index]?.pid }))
      }, delay)
    })
    return listening
  }

  const stopAll = async (signal: NodeJS.Signals) => {
    const live = workers.filter((child): child is NonNullable<typeof child> => child !== undefined)
    for (const child of live) child.kill(signal)
    return Promise.all(live.map((child) => child.exited))
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
        void stopAll(signal).then(() => exit(1))
        return
      }
      stopping = true
      logger.info('shutdown_started', { signal, workers: workers.filter(Boolean).length, drainMs: config.shutdownDrainMs })
      void stopAll(signal).then((codes) => {
        const clean = codes.every((code) => code === 0)
        logger.info('shutdown_complete', { workers: codes.length, clean })
        exit(clean ? 0 : 1)
      })
    })
  }

  await Promise.all(Array.from({ length: config.workers }, (_, index) => spawn(index)))
  started = true
  logger.info('listening', { url: shownUrl(config.host, port), workers: config.workers })
  // The workers and the signal handlers keep the process alive from here.
  return new Promise<never>(() => {})
}

/**
 * Copies a worker's log to this process's stdout in whole lines, so that the lines of two
 * workers never interleave inside one line (a pipe makes only writes of up to 4 KiB atomic).
 * Resolves when the worker logged that it listens.
 */
function relayLines(stream: ReadableStream<Uint8Array>): Promise<void> {
  let resolveListening = () => {}
  const listening = new Promise<void>((resolve) => (resolveListening = resolve))
  void (async () => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    let pending = ''
    let heard = false
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      pending += decoder.decode(value, { stream: true })
      const end = pending.lastIndexOf('\n')
      if (end < 0) continue
      const lines = pending.slice(0, end + 1)
      pending = pending.slice(end + 1)
      if (!heard && lines.includes('"event":"listening"')) {
        heard = true
        resolveListening()
      }
      process.stdout.write(lines)
    }
    if (pending) process.stdout.write(pending + '\n')
    // A worker that ends without listening is handled by its exit (start-up failure or restart).
  })()
  return listening
}

/**
 * In a worker: when the parent is gone (killed without passing a signal on), the worker is
 * adopted by another process; it then shuts down as on SIGTERM instead of serving on unwatched.
 */
export function stopWhenOrphaned(onOrphaned: () => void, everyMs = 1000): void {
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer)
      onOrphaned()
    }
  }, everyMs)
  timer.unref()
}
