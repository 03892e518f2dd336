import { ConfigError, loadConfig } from './config/config.ts'
import { createLogger, stdoutSink } from './logger.ts'
import { createApp } from './app.ts'
import { createSampleOrganisationIfEmpty, sampleInstructions } from './bootstrap.ts'
import { assertPortFree, isAddressInUse, PortInUseError } from './http/port-in-use.ts'

/** Entry point: load the configuration, build the app, listen, and shut down gracefully. */

/** A start-up problem the operator can fix: one line on stderr, exit status 2. */
function refuseToStart(message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}

let config
try {
  config = loadConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  refuseToStart(`configuration error: ${error.message}`)
}
// Before the data directory is touched: a second server on a taken port changes nothing.
await assertPortFree(config.host, config.port).catch((error) => {
  if (!(error instanceof PortInUseError)) throw error
  refuseToStart(error.message)
})

const sink = stdoutSink()
const logger = createLogger(config.logLevel, sink.write)
const app = createApp({ config, logger })
const sample = createSampleOrganisationIfEmpty(app.store, Date.now())
let server
try {
  server = app.listen()
} catch (error) {
  // Another process took the port since the probe above.
  if (!isAddressInUse(error)) throw error
  refuseToStart(new PortInUseError(config.host, config.port).message)
}
const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host
const baseUrl = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${server.port}`
logger.info('listening', { url: baseUrl })
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
