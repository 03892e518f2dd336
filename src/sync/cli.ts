import { parseArgs } from 'node:util'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiResponseError, Client, NetworkError, UnexpectedResponseError, type RetryEvent } from '../client/index.ts'
import { toInstant } from '../client/windows.ts'
import { Warehouse } from './warehouse.ts'
import { runSync, SyncInputError, type SyncProgress, type SyncSummary } from './sync.ts'

const USAGE = `usage: npm run -s sync -- --url <base URL> --into <file.duckdb> [--since <date>] [--token-env <VAR>] [--json]
  --url        where the API is served, e.g. http://127.0.0.1:3000
  --into       the DuckDB file to create or bring up to date
  --since      first run only: the start of the mirrored range (default: 90 days ago)
  --token-env  the environment variable holding the API token (default: API_TOKEN)
  --json       print one JSON summary on stdout instead of progress on the terminal
Exit status: 0 the mirror is current, 2 wrong input, 1 a failure (the file keeps every window committed).`

export interface SyncIo {
  env: Record<string, string | undefined>
  now: number
  out: (text: string) => void
  err: (text: string) => void
  /** Whether standard error is a terminal (progress is drawn only there). */
  interactive: boolean
}

/** `sync`: mirrors one organisation into a DuckDB file (docs/loading.md#sync). Returns the exit status. */
export async function runSyncCommand(argv: string[], io: SyncIo): Promise<number> {
  let options: { url: string; into: string; since: number | null; token: string; json: boolean }
  try {
    options = parseOptions(argv, io.env)
  } catch (error) {
    if (error instanceof HelpRequested) {
      io.out(`${USAGE}\n`)
      return 0
    }
    io.err(`sync: ${(error as Error).message}\n`)
    return 2
  }

  let requests = 0
  const waits: RetryEvent[] = []
  const client = new Client({
    baseUrl: options.url,
    token: options.token,
    fetch: (url, init) => {
      requests++
      return fetch(url, init)
    },
    onRetry: (event) => {
      waits.push(event)
      if (!options.json && io.interactive) io.err(`\nwaiting ${event.waitSeconds.toFixed(1)} s (${event.reason.replace('_', ' ')})\n`)
    },
  })
  const tempDir = mkdtempSync(join(tmpdir(), 'qa-sync-'))
  // Ctrl-C is the documented way to stop a run: what was committed stays, the window being
  // written to its temporary file does not, and neither does the file (DuckDB rolls back the
  // open transaction when the file is next opened).
  const stop = (signal: NodeJS.Signals) => {
    rmSync(tempDir, { recursive: true, force: true })
    io.err(`${io.interactive ? '\n' : ''}sync: stopped by ${signal}; every window committed so far is kept, run sync again to go on\n`)
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  let warehouse: Warehouse | undefined
  try {
    warehouse = await Warehouse.open(options.into)
    const summary = await runSync({
      client,
      warehouse,
      baseUrl: options.url,
      since: options.since,
      now: io.now,
      tempDir,
      onProgress: !options.json && io.interactive ? (p) => io.err(`\r${describeProgress(p)}`) : undefined,
    })
    const waitedSeconds = waits.reduce((sum, event) => sum + event.waitSeconds, 0)
    if (options.json) io.out(`${JSON.stringify({ ...summary, requests, waits: waits.length, waitedSeconds: round(waitedSeconds) })}\n`)
    else io.err(`${io.interactive ? '\n' : ''}${describeSummary(summary, requests, waits.length)}\n`)
    return 0
  } catch (error) {
    if (error instanceof SyncInputError) {
      io.err(`sync: ${error.message}\n`)
      return 2
    }
    io.err(`${io.interactive ? '\n' : ''}sync: ${describeFailure(error)}; every window committed so far is kept, run sync again to go on\n`)
    return 1
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    warehouse?.close()
    rmSync(tempDir, { recursive: true, force: true })
  }
}

class HelpRequested extends Error {}

function parseOptions(argv: string[], env: Record<string, string | undefined>) {
  if (argv.includes('--help') || argv.includes('-h')) throw new HelpRequested()
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: { url: { type: 'string' }, into: { type: 'string' }, since: { type: 'string' }, 'token-env': { type: 'string' }, json: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }))
  } catch (error) {
    throw new Error(`${(error as Error).message.split('\n')[0]} (sync --help lists the options)`)
  }
  if (!values.url) throw new Error('--url is required: where the API is served, e.g. --url http://127.0.0.1:3000')
  if (!/^https?:\/\/[^/]+/i.test(values.url)) throw new Error(`--url must be an http:// or https:// URL; got ${values.url}`)
  if (!values.into) throw new Error('--into is required: the DuckDB file to keep current, e.g. --into tickets.duckdb')
  let since: number | null = null
  if (values.since !== undefined) {
    try {
      since = toInstant(values.since, '--since')
    } catch (error) {
      throw new Error((error as Error).message)
    }
  }
  const variable = values['token-env'] ?? 'API_TOKEN'
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) throw new Error(`--token-env takes the name of an environment variable; got ${variable}`)
  const token = env[variable]
  if (!token) throw new Error(`the environment variable ${variable} holding the API token is not set (the token is never taken from an argument)`)
  return { url: values.url.replace(/\/+$/, ''), into: values.into, since, token, json: values.json ?? false }
}

function describeProgress(p: SyncProgress): string {
  const seconds = p.elapsedMs / 1000
  const rate = seconds > 0 ? Math.round(p.rows / seconds) : 0
  const done = Math.round((p.windowsDone / p.windowsTotal) * 20)
  return `${p.phase === 'backfill' ? 'loading' : 'changes'} [${'#'.repeat(done)}${'.'.repeat(20 - done)}] window ${p.windowsDone}/${p.windowsTotal}  ${p.rows} rows  ${rate} rows/s`
}

function describeSummary(s: SyncSummary, requests: number, waits: number): string {
  return (
    `mirror current up to ${s.loadedUntil}: tickets ${s.tickets.inserted} inserted, ${s.tickets.updated} updated; ` +
    `queues ${s.queues.inserted + s.queues.updated}, locations ${s.locations.inserted + s.locations.updated}; ` +
    `${s.windows} window(s), ${requests} request(s), ${waits} wait(s)`
  )
}

/** One line that says why, without the token. */
function describeFailure(error: unknown): string {
  if (error instanceof ApiResponseError) return `the API answered ${error.status} ${error.code}: ${error.message}`
  if (error instanceof NetworkError || error instanceof UnexpectedResponseError) return error.message
  if (error instanceof Error && /lock/i.test(error.message)) return `the DuckDB file is in use by another process (${error.message.split('\n')[0]})`
  return error instanceof Error ? error.message.split('\n')[0]! : String(error)
}

function round(value: number): number {
  return Math.round(value * 10) / 10
}

if (import.meta.main) {
  process.exitCode = await runSyncCommand(process.argv.slice(2), {
    env: process.env,
    now: Date.now(),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    interactive: process.stderr.isTTY === true,
  })
}
