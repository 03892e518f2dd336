import { ConfigError, loadConfig, type Config } from './config/config.ts'
import { createLogger, stdoutSink } from './logger.ts'
import { createApp } from './app.ts'
import { createSampleOrganisationIfEmpty, sampleInstructions } from './bootstrap.ts'
import { assertPortFree, isAddressInUse, PortInUseError } from './http/port-in-use.ts'
import { ControlStore, ControlStoreError } from './control/store.ts'
import { stopWhenOrphaned, superviseWorkers, workerIndex } from './server/workers.ts'
import { shownUrl } from './server/shown-url.ts'
import { parentMetrics, serverMetrics } from './metrics/setup.ts'
import { IN_COMPILED_FILE } from './web/served-files.ts'
import { DataDirectoryError, ensureWritableDataDirectory } from './db/writable-data-directory.ts'
import { logSchemaCensus, takeSchemaCensus } from './tenant/schema-census.ts'

/** Entry point: load the configuration, build the app, listen, and shut down gracefully. */

/** A start-up problem the operator can fix: one line on stderr, exit status 2. */
function refuseToStart(message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}

let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  refuseToStart(`configuration error: ${error.message}`)
}
const worker = workerIndex()
// Before the data directory is touched: a second server on a taken port changes nothing. A
// worker of WORKERS=N does not check: its parent did, and its siblings hold the port by now.
const port =
  worker !== undefined
    ? config.port
    : await assertPortFree(config.host, config.port).catch((error) => {
        if (!(error instanceof PortInUseError)) throw error
        refuseToStart(error.message)
      })

// A worker's parent checked it already; a replica's directory is never written, so it need not be writable.
if (worker === undefined && !config.readOnly) {
  try {
    ensureWritableDataDirectory(config.dataDir)
  } catch (error) {
    if (!(error instanceof DataDirectoryError)) throw error
    refuseToStart(error.message)
  }
}

/** A data directory that READ_ONLY=1 cannot serve (no control.sqlite, a WAL-mode or older copy): one line, exit 2. */
function openingDataDir<T>(open: () => T): T {
  try {
    return open()
  } catch (error) {
    if (!(error instanceof ControlStoreError)) throw error
    refuseToStart(`data directory error: ${error.message}`)
  }
}

const sink = stdoutSink()
const logger = createLogger(config.logLevel, sink.write)
const urlOf = (port: number) => shownUrl(config.host, port)

/** METRICS_PORT taken: refused like PORT, before the data directory is touched. */
function listenForMetrics(listen: () => unknown): void {
  try {
    listen()
  } catch (error) {
    if (!isAddressInUse(error)) throw error
    refuseToStart(new PortInUseError(config.metricsHost, config.metricsPort!, 'METRICS_PORT').message)
  }
}

if (config.workers > 1 && worker === undefined) {
  // The parent of WORKERS=N serves nothing itself (src/server/workers.ts), only the metrics of all.
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
    beforeStart: (port) => {
      // Once, here, rather than raced by N workers on an empty data directory.
      const store = openingDataDir(() => new ControlStore(config.dataDir, { readOnly: config.readOnly }))
      const sample = createSampleOrganisationIfEmpty(store, Date.now())
      logSchemaCensus(logger, takeSchemaCensus(config.dataDir, store.listOrganisations()))
      store.close()
      if (sample) process.stderr.write(sampleInstructions(sample, urlOf(port), Date.now()))
    },
  })
}
const metrics = serverMetrics(config, logger, worker)
listenForMetrics(metrics.listen)
const app = openingDataDir(() => createApp({ config, logger, metrics: metrics.recorder }))
const sample = worker === undefined ? createSampleOrganisationIfEmpty(app.store, Date.now()) : null
// Once per service: by the lone server here, by the parent of WORKERS=N before its workers start.
if (worker === undefined) logSchemaCensus(logger, takeSchemaCensus(config.dataDir, app.store.listOrganisations()))
let server
try {
  // A worker shares the port its parent checked with the other workers.
  server = app.listen(config.port, { reusePort: worker !== undefined })
} catch (error) {
  // Another process took the port since the probe above.
  if (!isAddressInUse(error)) throw error
  refuseToStart(new PortInUseError(config.host, config.port).message)
}
const baseUrl = urlOf(server.port ?? config.port)
logger.info('listening', { url: baseUrl, ...(worker === undefined ? {} : { worker, pid: process.pid }) })
if (worker !== undefined) stopWhenOrphaned(() => process.kill(process.pid, 'SIGTERM'))
if (sample) process.stderr.write(sampleInstructions(sample, baseUrl, Date.now()))

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
    app.close().then(
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
