/**
 * Server for `npm run -s bench -- --only layers`: the service as a worker of src/main.ts builds
 * it (the same logger, metrics recorded when METRICS_PORT is set), in one process, with the
 * layers named in LAYERS_OFF (comma-separated, src/http/layers-off.ts) switched off.
 * Settings as for src/main.ts.
 */
import { loadConfig } from '../src/config/config.ts'
import { createLogger, stdoutSink } from '../src/logger.ts'
import { createApp } from '../src/app.ts'
import { serverMetrics } from '../src/metrics/setup.ts'
import { PIPELINE_LAYERS, type PipelineLayer } from '../src/http/layers-off.ts'

const layersOff = (process.env.LAYERS_OFF ?? '').split(',').filter((name) => name !== '')
const unknown = layersOff.filter((name) => !(PIPELINE_LAYERS as readonly string[]).includes(name))
if (unknown.length > 0) throw new Error(`LAYERS_OFF: unknown ${unknown.join(', ')}; known: ${PIPELINE_LAYERS.join(', ')}`)

const config = loadConfig()
const sink = stdoutSink()
const logger = createLogger(config.logLevel, sink.write)
const metrics = serverMetrics(config, logger, undefined)
metrics.listen()
const app = createApp({ config, logger, metrics: metrics.recorder, layersOff: layersOff as PipelineLayer[] })
const server = app.listen(config.port)
logger.info('listening', { url: `http://${config.host}:${server.port}`, layersOff })
process.on('SIGTERM', () => {
  sink.flush()
  process.exit(0)
})
