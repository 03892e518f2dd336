import { existsSync, rmSync } from 'node:fs'
import { ApiResponseError, Client, NetworkError, NotFoundError, UnauthorizedError, UnexpectedResponseError, type RetryEvent } from '../client/index.ts'
import { toInstant } from '../client/windows.ts'
import { parseOptions, UsageError } from '../cli/args.ts'
import { openTarget, parseTarget, type TargetSpec } from './open-target.ts'
import { runSync, type SyncProgress, type SyncSummary } from './sync.ts'
import { TargetBusyError, type SyncTarget } from './target.ts'

const USAGE = `usage: npm run -s sync -- --url <base URL> --into <file.duckdb | postgresql://user@host:port/db> [--schema <name>]
                          [--since <date>] [--reconcile] [--token-env <VAR>] [--json]
  --url        where the API is served, e.g. http://127.0.0.1:3000 (without /v1)
  --into       the DuckDB file to create or bring up to date, or a PostgreSQL database
               (postgresql:// or postgres://; the password in the URL or in PGPASSWORD;
               ?sslmode= and ?sslrootcert= as for psql, sslmode prefer by default)
  --schema     PostgreSQL only: the schema that holds the tables (default: public)
  --since      first run only: the start of the mirrored range (default: 90 days ago)
  --reconcile  read the whole mirrored range again and make the mirror equal to the server:
               inserts, updates and deletes (run it weekly beside an hourly sync)
  --token-env  the environment variable holding the API token (default: API_TOKEN)
  --json       print one JSON summary on stdout instead of progress on the terminal
Exit status: 0 the mirror is current, 2 wrong input, 1 a failure (every window committed is kept).`

const OPTIONS = {
  url: { type: 'string' },
  into: { type: 'string' },
  schema: { type: 'string' },
  since: { type: 'string' },
  reconcile: { type: 'boolean' },
  'token-env': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

export interface SyncIo {
  env: Record<string, string | undefined>
  now: number
  out: (text: string) => void
  err: (text: string) => void
  /** Whether standard error is a terminal (progress is drawn only there). */
  interactive: boolean
}

interface SyncCommandOptions {
  url: string
  target: TargetSpec
  since: number | null
  reconcile: boolean
  tokenVariable: string
  token: string
  json: boolean
}

/** `sync`: mirrors one organisation into a DuckDB file or PostgreSQL (docs/loading.md#sync). Returns the exit status. */
export async function runSyncCommand(argv: string[], io: SyncIo): Promise<number> {
  let options: SyncCommandOptions
  try {
    const parsed = parseCommandLine(argv, io)
    if (parsed === 'help') {
      io.out(`${USAGE}\n`)
      return 0
    }
    options = parsed
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.err(`sync: ${error.message}\n`)
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
  // A DuckDB file this run creates is removed again if the run ends in wrong input (exit 2):
  // nothing is left behind by a command that did nothing.
  const createdFile = options.target.kind === 'duckdb' && !existsSync(options.target.path) ? options.target.path : null
  // Ctrl-C is the documented way to stop a run: what was committed stays, the window being
  // loaded does not (its transaction is rolled back: DuckDB when the file is next opened,
  // PostgreSQL when the connection drops).
  const stop = (signal: NodeJS.Signals) => {
    target?.abandon()
    io.err(`${io.interactive ? '\n' : ''}sync: stopped by ${signal}; every window committed so far is kept, run sync again to go on\n`)
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }
  let target: SyncTarget | undefined
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  let status = 1
  try {
    target = await openTarget(options.target)
    const summary = await runSync({
      client,
      target,
      baseUrl: options.url,
      since: options.since,
      reconcile: options.reconcile,
      now: io.now,
      onProgress: !options.json && io.interactive ? (p) => io.err(`\r${describeProgress(p)}`) : undefined,
    })
    const waitedSeconds = waits.reduce((sum, event) => sum + event.waitSeconds, 0)
    if (options.json) io.out(`${JSON.stringify({ ...summary, requests, waits: waits.length, waitedSeconds: round(waitedSeconds) })}\n`)
    else io.err(`${io.interactive ? '\n' : ''}${describeSummary(summary, requests, waits.length)}\n`)
    status = 0
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`sync: ${error.message}\n`)
      status = 2
    } else if (error instanceof TargetBusyError) {
      io.err(`sync: ${describeFailure(error, options)}\n`)
    } else {
      io.err(`${io.interactive ? '\n' : ''}sync: ${describeFailure(error, options)}; every window committed so far is kept, run sync again to go on\n`)
    }
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    await target?.close().catch(() => undefined)
    if (status === 2 && createdFile) {
      for (const file of [createdFile, `${createdFile}.wal`]) rmSync(file, { force: true })
    }
  }
  return status
}

function parseCommandLine(argv: string[], io: SyncIo): SyncCommandOptions | 'help' {
  const { values } = parseOptions(argv, OPTIONS, undefined, 'sync --help lists the options')
  if (values.help) return 'help'
  if (!values.url) throw new UsageError('--url is required: where the API is served, e.g. --url http://127.0.0.1:3000')
  if (!/^https?:\/\/[^/]+/i.test(values.url)) throw new UsageError(`--url must be an http:// or https:// URL; got ${values.url}`)
  if (!values.into) throw new UsageError('--into is required: a DuckDB file (--into tickets.duckdb) or a PostgreSQL URL (--into postgresql://user@host:5432/db)')
  const target = parseTarget(values.into, values.schema, io.env)
  let since: number | null = null
  if (values.since !== undefined) {
    try {
      since = toInstant(values.since, '--since')
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
    if (since >= io.now) throw new UsageError(`--since must be in the past; got ${values.since}`)
  }
  const tokenVariable = values['token-env'] ?? 'API_TOKEN'
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenVariable)) throw new UsageError(`--token-env takes the name of an environment variable; got ${tokenVariable}`)
  const token = io.env[tokenVariable]
  if (!token) throw new UsageError(`the environment variable ${tokenVariable} holding the API token is not set (the token is never taken from an argument)`)
  return { url: values.url.replace(/\/+$/, ''), target, since, reconcile: values.reconcile ?? false, tokenVariable, token, json: values.json ?? false }
}

function describeProgress(p: SyncProgress): string {
  const seconds = p.elapsedMs / 1000
  const rate = seconds > 0 ? Math.round(p.rows / seconds) : 0
  const done = Math.round((p.windowsDone / p.windowsTotal) * 20)
  const phase = { backfill: 'loading', reconcile: 'reconciling', changes: 'changes' }[p.phase]
  return `${phase} [${'#'.repeat(done)}${'.'.repeat(20 - done)}] window ${p.windowsDone}/${p.windowsTotal}  ${p.rows} rows  ${rate} rows/s`
}

function describeSummary(s: SyncSummary, requests: number, waits: number): string {
  return (
    `mirror current up to ${s.loadedUntil}${s.reconciled ? ', reconciled' : ''}: tickets ${s.tickets.inserted} inserted, ${s.tickets.updated} updated, ${s.tickets.deleted} deleted; ` +
    `queues ${s.queues.inserted + s.queues.updated}, locations ${s.locations.inserted + s.locations.updated}; ` +
    `${s.windows} window(s), ${requests} request(s), ${waits} wait(s)`
  )
}

/** One line that says why and what to do, naming the URL given and never the token or a password. */
function describeFailure(error: unknown, options: SyncCommandOptions): string {
  const url = options.url
  const notTheBase = /\/v1$/i.test(url) ? `; --url is the server's base URL, without /v1: try --url ${url.replace(/\/v1$/i, '')}` : ''
  if (error instanceof UnauthorizedError) {
    return `the API at ${url} refused the token in ${options.tokenVariable} (401 unauthorized): put a current token of the organisation in ${options.tokenVariable}; a revoked, mistyped or cut-off token is refused`
  }
  if (error instanceof NotFoundError) return `the API at ${url} answered 404 not_found: ${error.message}${notTheBase}`
  if (error instanceof ApiResponseError) return `the API at ${url} answered ${error.status} ${error.code}: ${error.message}`
  if (error instanceof NetworkError) return `no answer from ${url}: ${error.message.replace(/^no answer from \S+ /, '')}`
  if (error instanceof UnexpectedResponseError) return `${url} answered something that is not this API (${error.message})${notTheBase}`
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error)
  if (options.target.kind === 'duckdb' && /lock/i.test(message)) {
    return `the DuckDB file is in use by another process (${message}); a DuckDB file has one writer or many readers, never both: wait for the other sync to end, close the reader, or sync into PostgreSQL for readers that stay connected`
  }
  if (options.target.kind === 'postgresql') return `PostgreSQL at ${options.target.location.description}: ${withoutPassword(message, options.target.location.password)}`
  return message
}

function withoutPassword(message: string, password: string | undefined): string {
  return password ? message.split(password).join('…') : message
}

function round(value: number): number {
  return Math.round(value * 10) / 10
}

/** `sync` run by a process: the environment's settings and token, its output to stdout and stderr. Returns the exit status. */
export function runSyncProcess(argv: string[]): Promise<number> {
  return runSyncCommand(argv, {
    env: process.env,
    now: Date.now(),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    interactive: process.stderr.isTTY === true,
  })
}

if (import.meta.main) process.exitCode = await runSyncProcess(process.argv.slice(2))
