/**
 * Diagnostic server for `bun run bench --only process`: the service exactly as src/main.ts
 * builds it, plus one path, `/baseline-page`, answered by the framework-free baseline's page
 * handler (baseline-page.ts, on a connection of its own) before any of the service's code runs.
 * The same handler in its own process is the standalone baseline, so comparing the two measures
 * what running inside the service's process costs code that is not the service's.
 * Settings as for src/main.ts, plus BASELINE_FILE (the tenant file the handler reads).
 */
import { Database } from 'bun:sqlite'
import { loadConfig } from '../src/config/config.ts'
import { createLogger, stdoutSink } from '../src/logger.ts'
import { createApp } from '../src/app.ts'
import { baselinePageHandler } from './baseline-page.ts'

const config = loadConfig()
const logger = createLogger(config.logLevel, stdoutSink().write)
const app = createApp({ config, logger })
const baselinePage = baselinePageHandler(new Database(process.env.BASELINE_FILE!, { readonly: true }))

const server = Bun.serve({
  port: config.port,
  hostname: config.host,
  development: false,
  fetch(request) {
    // Routed as the standalone baseline routes (one URL parse), so that only the process differs.
    const url = new URL(request.url)
    return url.pathname === '/baseline-page' ? baselinePage(url.searchParams) : app.fetch(request)
  },
})
logger.info('listening', { url: `http://${config.host}:${server.port}` })
