import { ConfigError, loadConfig, shownUrl, type Config } from './config/config.ts'
import { createLogger, stdoutSink } from './logger.ts'
import { createApp } from './app.ts'
import { createSampleOrganisationIfEmpty, sampleInstructions, wantsSampleData } from './bootstrap.ts'
import { assertPortFree, PortInUseError } from './http/port-in-use.ts'
import { ControlStore, ControlStoreError } from './control/store.ts'
import { stopWhenOrphaned, superviseWorkers, supervisorPid, workerIndex } from './server/workers.ts'
import { announceListening } from './server/worker-messages.ts'
import { HANDOVER_MS, ORPHAN_STOP_MS } from './server/drain.ts'
import { parentMetrics, serverMetrics } from './metrics/setup.ts'
import { IN_COMPILED_FILE } from './web/served-files.ts'
import { DataDirectoryError, ensureWritableDataDirectory } from './db/writable-data-directory.ts'
import { isReplicaDataDirectory, replicaRefusal } from './replica/mark.ts'
import { isLoopbackRedis } from './replica/shared-redis.ts'
import { logSchemaCensus, takeSchemaCensus } from './tenant/schema-census.ts'
import { escapeTerminal } from './cli/terminal-text.ts'
import { assertDirectoryOrAbsent, assertWritableFileSystem, describeStartUpFailure, type StartStep } from './start-up-failure.ts'
import { invokedAs } from './cli/invoked-as.ts'
import { announceStart } from './server/start-line.ts'
import { tcpMigrateReq } from './server/tcp-migrate.ts'
import { serveArgumentsProblem, serveUsage } from './cli/serve-usage.ts'

/** Entry point: load the configuration, build the app, listen, and shut down gracefully. */

/** A start-up problem the operator can fix: one line on stderr, exit status 2. */
function refuseToStart(message: string): never {
  // A setting's value or a path may hold terminal control characters (cli/terminal-text.ts).
  process.stderr.write(`${escapeTerminal(message)}\n`)
  process.exit(2)
}

/** Runs a step of the start; an error of the host (src/start-up-failure.ts) refuses the start in one line. */
function atStart<T>(step: StartStep, run: () => T): T {
  try {
    return run()
  } catch (error) {
    refuseToStart(describeStartUpFailure(error, step) ?? rethrow(error))
  }
}
const rethrow = (error: unknown): never => {
  throw error
}

// Run from a checkout (`npm start -- --help`); the compiled file's `serve` checks its own (src/cli/queue-api.ts).
if (import.meta.main) {
  const args = process.argv.slice(2)
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(serveUsage(invokedAs('serve')) + '\n')
    process.exit(0)
  }
  const problem = serveArgumentsProblem(args)
  if (problem !== undefined) refuseToStart(problem)
}

let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  refuseToStart(`configuration error: ${error.message}`)
}
const worker = workerIndex()
const listenStep: StartStep = { listen: 'PORT', host: config.host, port: config.port }
// Before the data directory is touched: a second server on a taken port changes nothing. A
// worker does not check: its supervisor did, and its siblings hold the port by now.
const port =
  worker !== undefined
    ? config.port
    : await assertPortFree(config.host, config.port).catch((error) => {
        if (error instanceof PortInUseError) refuseToStart(error.message)
        refuseToStart(describeStartUpFailure(error, listenStep) ?? rethrow(error))
      })

const dataDirStep: StartStep = { dataDir: config.dataDir }

// A replica's copy is its restore loop's: a server that may write (last-used times, the demo quota) refuses it.
if (worker === undefined && !config.readOnly && isReplicaDataDirectory(config.dataDir)) refuseToStart(replicaRefusal(config.dataDir, 'refusing to serve without READ_ONLY=1', 'serve it with READ_ONLY=1, or serve the writer\'s data directory'))

// A worker's parent checked it already; a replica's directory is never written, so it need not be
// writable, but it is trusted only when it is ours as well (db/trusted-directory.ts).
if (worker === undefined) {
  try {
    atStart(dataDirStep, () => {
      assertDirectoryOrAbsent(config.dataDir)
      if (!config.readOnly) assertWritableFileSystem(config.dataDir)
      ensureWritableDataDirectory(config.dataDir, { readOnly: config.readOnly })
    })
  } catch (error) {
    if (!(error instanceof DataDirectoryError)) throw error
    refuseToStart(error.message)
  }
}

/** A data directory that READ_ONLY=1 cannot serve (no control.sqlite, a WAL-mode or older copy): one line, exit 2. */
function openingDataDir<T>(open: () => T): T {
  try {
    return atStart(dataDirStep, open)
  } catch (error) {
    // A file that is not the service's own, found as it is opened (db/trusted-directory.ts).
    if (error instanceof DataDirectoryError) refuseToStart(error.message)
    if (!(error instanceof ControlStoreError)) throw error
    refuseToStart(`data directory error: ${error.message}`)
  }
}

const sink = stdoutSink()
// Every line a worker writes names it.
const logger = createLogger(config.logLevel, sink.write, worker === undefined ? {} : { worker })
const urlOf = (port: number) => shownUrl(config.host, port)

/** METRICS_PORT taken, METRICS_HOST not this machine's: refused like PORT, before the data directory is touched. */
function listenForMetrics(listen: () => unknown): void {
  atStart({ listen: 'METRICS_PORT', host: config.metricsHost, port: config.metricsPort! }, listen)
}

if (worker === undefined) {
  // The process started serves nothing itself: it supervises WORKERS workers (one by default),
  // which a SIGHUP replaces one by one (src/server/workers.ts), and serves the metrics of all.
  const metrics = parentMetrics(config, logger)
  if (metrics) listenForMetrics(metrics.listen)
  await superviseWorkers({
    config,
    logger,
    port,
    // In the compiled file a worker is the same executable's `serve` command (src/cli/queue-api.ts).
    entry: IN_COMPILED_FILE ? 'serve' : import.meta.path,
    flush: sink.flush,
    channel: metrics?.channel,
    restarted: metrics?.workerRestarted,
    beforeStart: (port) => {
      // Once, here, rather than raced by N workers on an empty data directory.
      const toTerminal = process.stderr.isTTY === true
      const sample = openingDataDir(() => {
        const store = new ControlStore(config.dataDir, { readOnly: config.readOnly })
        try {
          const made = wantsSampleData(config.sampleData, toTerminal) ? createSampleOrganisationIfEmpty(store, Date.now(), toTerminal) : null
          logSchemaCensus(logger, takeSchemaCensus(config.dataDir, store.listOrganisations(), { readOnly: config.readOnly }))
          return made
        } finally {
          store.close()
        }
      })
      // A replica's REDIS_URL on loopback: each machine would count in its own Redis (replica/shared-redis.ts).
      if (config.readOnly && config.redisUrl !== undefined && isLoopbackRedis(config.redisUrl)) {
        logger.warn('redis_on_loopback', { hint: 'REDIS_URL names this machine: replicas on other machines each counting in their own Redis would let a token make N times its limit; give every replica the one shared Redis' })
      }
      if (sample) process.stderr.write(escapeTerminal(sampleInstructions(sample, urlOf(port), Date.now(), invokedAs('admin'))))
    },
    started: (port) => announceStart(config, sink.write, urlOf(port), tcpMigrateReq()),
  })
}
// A worker from here on.
const metrics = serverMetrics(config, logger, worker)
const app = openingDataDir(() => createApp({ config, logger, metrics: metrics.recorder }))
// The port its supervisor checked, shared with the other workers and, during a rolling
// restart, with the worker this one replaces.
const server = atStart(listenStep, () => app.listen(config.port, { reusePort: true }))
logger.info('listening', { url: urlOf(server.port ?? config.port), pid: process.pid })
// SIGHUP is the supervisor's (a rolling restart replaces this worker); sent here too, to a whole
// cgroup say, it would otherwise kill the worker at once.
process.on('SIGHUP', () => {})
// stdout is the supervisor's pipe: once the supervisor is gone a write fails (EPIPE), which must
// not end this worker with a stack trace; the orphan's stop below follows.
process.stdout.on('error', () => {})

let stopping = false
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) {
      // A second signal: the operator does not want to wait for the drain.
      logger.warn('shutdown_forced', { signal })
      process.exit(1)
    }
    stopping = true
    logger.info('shutdown_started', { signal, inFlight: app.inFlight(), drainMs: config.shutdownDrainMs })
    app
      .close(config.shutdownDrainMs, { handoverMs: HANDOVER_MS })
      // After the last request and export: what this worker counted is kept by its supervisor.
      .then(() => metrics.final())
      .then(
        () => {
          logger.info('shutdown_complete')
          sink.flush()
          process.exit(0)
        },
        (error) => {
          logger.error('shutdown_failed', { error: String(error) })
          process.exit(1)
        },
      )
  })
}
// Supervisor gone (any signal, kill -9 too): nobody passes a stop on, reads the log or keeps the
// counts, and a restarted service starts workers of its own. Gone within a second: no handover,
// half a second for what is in flight, then out (a drain already running is cut short too).
stopWhenOrphaned(supervisorPid() ?? process.ppid, () => {
  setTimeout(() => process.exit(0), ORPHAN_STOP_MS).unref()
  if (stopping) return
  stopping = true
  void app.close(ORPHAN_STOP_MS, { handoverMs: 0 }).finally(() => process.exit(0))
})
// Only now, with the handlers above in place: Bun installs a signal handler after an IPC message
// sent before it in the same turn, so a supervisor stopping at once on hearing this would have
// killed the worker outright (the rolling restart's replacement; the shutdown then exited 1).
announceListening()
