import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ApiResponseError, Client, NetworkError, NotFoundError, TimeoutError, UnauthorizedError, UnexpectedResponseError, type RetryEvent } from '../client/index.ts'
import { toInstant } from '../client/windows.ts'
import { parseOptions, UsageError } from '../cli/args.ts'
import { invokedAs } from '../cli/invoked-as.ts'
import { assertWritableFileLocation, describeStartUpFailure } from '../start-up-failure.ts'
import { openTarget, parseTarget, type TargetSpec } from './open-target.ts'
import { parseRoleName } from './postgres-location.ts'
import { DownloadBrokeError } from './download-watch.ts'
import { DiskFullError, freeBytes, isDiskFull } from './disk-full.ts'
import { AnswerRefusedError } from './answer-checks.ts'
import { runSync, WINDOW_ATTEMPTS, type SyncProgress, type SyncSummary } from './sync.ts'
import { isWellFormedToken } from '../auth/token.ts'
import { escapeTerminal as printable, terminalSafeJson } from '../cli/terminal-text.ts'
import { LockTimeoutError, TargetBusyError, TooManyDeletesError, type RowCount, type SyncTarget } from './target.ts'

const usage = (program: string, indent = ' '.repeat(program.length + 8)) => `usage: ${program} --url <base URL> --into <file.duckdb | postgresql://user@host:port/db> [--schema <name>]
${indent}[--since <date>] [--reconcile] [--token-env <VAR> | --token-file <path>]
${indent}[--timeout <seconds>] [--grant <role>] [--max-delete <percent>] [--json | --quiet]
  --url        where the API is served, e.g. http://127.0.0.1:3000 (without /v1)
  --into       the DuckDB file to create or bring up to date, or a PostgreSQL database
               (postgresql:// or postgres://; the password in the URL or in PGPASSWORD;
               ?sslmode= and ?sslrootcert= as for psql, sslmode prefer by default)
  --schema     PostgreSQL only: the schema that holds the tables, a lower-case name (default: public)
  --since      first run only: the start of the mirrored range (default: 00:00 UTC of the day 90 days ago)
  --reconcile  read the whole mirrored range again and make the mirror equal to the server:
               inserts, updates and deletes (run it weekly beside an hourly sync; every run
               deletes what the server reports deleted)
  --max-delete the largest share of the mirror's tickets a --reconcile, or of its locations or queues
               any run, may delete for being absent from the server's answer (default: 50%)
  --token-env  the environment variable holding the API token (default: API_TOKEN)
  --token-file a file holding the API token (readable by its user only, else a warning), instead of --token-env
  --timeout    seconds without a byte from the API, or waiting for a PostgreSQL lock, before the
               run ends with exit 1 (default: 60)
  --grant      PostgreSQL only: give this role read access to the schema, tables added later included
  --json       print one JSON document on stdout (the summary, or {"error","message"} on failure)
  --quiet      print nothing when the run succeeds (for cron); a failure or a warning still prints its line
Exit status: 0 the mirror is current, 2 wrong input, 1 a failure (every window committed is kept).`

const OPTIONS = {
  url: { type: 'string' },
  into: { type: 'string' },
  schema: { type: 'string' },
  since: { type: 'string' },
  reconcile: { type: 'boolean' },
  'token-env': { type: 'string' },
  'token-file': { type: 'string' },
  timeout: { type: 'string' },
  grant: { type: 'string' },
  'max-delete': { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** `--timeout`'s default: a minute without a byte is a stalled server, not a slow one. */
const DEFAULT_TIMEOUT_SECONDS = 60

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
  /** Where the token came from, for messages: `API_TOKEN`, or the file's path. */
  tokenSource: string
  token: string
  timeoutSeconds: number
  /** --max-delete as a share, 0 to 1. */
  maxDeleteShare: number
  json: boolean
  quiet: boolean
}

/** What a failure is, as `--json` prints it (`{"error": kind, "message": line}`). */
type FailureKind = 'usage' | 'busy' | 'timeout' | 'too_many_deletes' | 'failure'

/** `sync`: mirrors one organisation into a DuckDB file or PostgreSQL (docs/loading.md#sync). Returns the exit status. */
export async function runSyncCommand(argv: string[], io: SyncIo): Promise<number> {
  const wantsJson = argv.includes('--json')
  /** One line on stderr and, with --json, one document on stdout: a script reads either. */
  const fail = (kind: FailureKind, message: string, status: number, hint = '') => {
    // Escaped: a message may quote what a server sent (a name, an error's text).
    io.err(`${io.interactive && kind !== 'usage' ? '\n' : ''}sync: ${printable(`${message}${hint}`)}\n`)
    if (wantsJson) io.out(`${terminalSafeJson({ error: kind, message: `${message}${hint}` })}\n`)
    return status
  }
  let options: SyncCommandOptions
  try {
    // Help wins over anything else on the line, a wrong option included.
    const parsed = argv.includes('--help') || argv.includes('-h') ? 'help' : parseCommandLine(argv, io)
    if (parsed === 'help') {
      io.out(`${usage(invokedAs('sync'))}\n`)
      return 0
    }
    options = parsed
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    return fail('usage', error.message, 2)
  }

  let requests = 0
  const waits: RetryEvent[] = []
  const client = new Client({
    baseUrl: options.url,
    token: options.token,
    timeoutMs: options.timeoutSeconds * 1000,
    fetch: (url, init) => {
      requests++
      return fetch(url, init)
    },
    onRetry: (event) => {
      waits.push(event)
      if (!options.json && !options.quiet && io.interactive) io.err(`\nwaiting ${event.waitSeconds.toFixed(1)} s (${event.reason.replace('_', ' ')})\n`)
    },
  })
  // A DuckDB file this run creates is removed again if the run commits nothing (wrong input, a
  // wrong URL or token): nothing is left behind by a command that did nothing.
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
  let committed = false
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  let status = 1
  try {
    target = await openTarget(options.target, { lockTimeoutSeconds: options.timeoutSeconds })
    const summary = await runSync({
      client,
      target,
      baseUrl: options.url,
      since: options.since,
      reconcile: options.reconcile,
      maxDeleteShare: options.maxDeleteShare,
      now: io.now,
      onRetry: (event) => {
        waits.push(event)
        if (!options.json && !options.quiet && io.interactive) io.err(`\nwaiting ${event.waitSeconds.toFixed(1)} s (download broke off, asking for the window again)\n`)
      },
      onProgress: !options.json && !options.quiet && io.interactive ? (p) => io.err(`\r${describeProgress(p)}`) : undefined,
    })
    const waitedSeconds = waits.reduce((sum, event) => sum + event.waitSeconds, 0)
    if (options.json) io.out(`${terminalSafeJson({ ...summary, requests, waits: waits.length, waitedSeconds: round(waitedSeconds) })}\n`)
    else if (!options.quiet) io.err(`${io.interactive ? '\n' : ''}${describeSummary(summary, requests, waits.length)}\n`)
    status = 0
  } catch (error) {
    // Said only where it is true and helps: the target holds committed windows, and running
    // again can go on (a refused token must be replaced first).
    const holdsWindows = (await target?.state().catch(() => null)) != null
    if (createdFile) committed = holdsWindows
    await target?.discardIfEmpty().catch(() => undefined)
    const kept = holdsWindows && !(error instanceof UnauthorizedError) ? '; every window committed so far is kept, run sync again to go on' : ''
    if (error instanceof UsageError) status = fail('usage', error.message, 2)
    else if (error instanceof TargetBusyError) status = fail('busy', describeFailure(error, options), 1)
    else if (error instanceof TimeoutError || error instanceof LockTimeoutError) status = fail('timeout', describeFailure(error, options), 1, kept)
    else if (error instanceof TooManyDeletesError) {
      const percent = `${Math.round(options.maxDeleteShare * 100)}%`
      status = fail(
        'too_many_deletes',
        `${error.message}, more than --max-delete ${percent} allows; nothing of it was deleted. If the server really holds that few (check with curl), run again with --max-delete 100%`,
        1,
        kept,
      )
    }
    else status = fail('failure', describeFailure(error, options), 1, kept)
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    await target?.close().catch(() => undefined)
    if (status !== 0 && createdFile && !committed) {
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
  if (/\/v1\/*$/i.test(values.url)) throw new UsageError(`--url is the server's base URL, without /v1: try --url ${values.url.replace(/\/v1\/*$/i, '')}`)
  if (!values.into) throw new UsageError('--into is required: a DuckDB file (--into tickets.duckdb) or a PostgreSQL URL (--into postgresql://user@host:5432/db)')
  const target = parseTarget(values.into, values.schema, io.env)
  if (target.kind === 'duckdb') intoWritable(target.path)
  let since: number | null = null
  if (values.since !== undefined) {
    try {
      since = toInstant(values.since, '--since')
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
    if (since >= io.now) throw new UsageError(`--since must be in the past; got ${values.since}`)
  }
  const { token, tokenSource, warning } = readToken(values['token-env'], values['token-file'], io.env)
  // Checked before any request: what is not one of the service's tokens is never sent (a file
  // holding a password, another service's key). Said without the token itself.
  if (!isWellFormedToken(token)) {
    throw new UsageError(
      `${tokenSource} does not hold an API token of this service (svc_ then 38 letters and digits, the last 6 a checksum; this one has ${token.length} characters${token.startsWith('svc_') ? ' and a wrong checksum' : ''}): nothing was sent; copy the token again as it was shown`,
    )
  }
  // A warning is not success output: printed with --quiet too, so that cron mails it.
  if (warning) io.err(`sync: warning: ${warning}\n`)
  const timeoutSeconds = values.timeout === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(values.timeout)
  if (!(timeoutSeconds >= 1 && timeoutSeconds <= 86_400)) throw new UsageError(`--timeout takes a number of seconds from 1 to 86400; got ${values.timeout}`)
  const maxDeleteShare = parseShare(values['max-delete'])
  if (values.json && values.quiet) throw new UsageError('--json and --quiet exclude each other: --json prints one document, --quiet nothing')
  if (values.grant !== undefined) {
    if (target.kind !== 'postgresql') throw new UsageError('--grant applies to a PostgreSQL target only')
    target.location.grantTo = parseRoleName(values.grant)
  }
  return {
    url: values.url.replace(/\/+$/, ''),
    target,
    since,
    reconcile: values.reconcile ?? false,
    tokenSource,
    token,
    timeoutSeconds,
    maxDeleteShare,
    json: values.json ?? false,
    quiet: values.quiet ?? false,
  }
}

/** A DuckDB file that cannot be made where --into says: one line and exit 2, before any request. */
function intoWritable(path: string): void {
  try {
    assertWritableFileLocation(path)
  } catch (error) {
    const line = describeStartUpFailure(error, { directory: path, setting: '--into' })
    if (line === undefined) throw error
    throw new UsageError(line)
  }
}

/** `--max-delete`: a percentage (`50%`, `50`, `12.5%`) from 0 to 100, as a share; 50% when not given. */
function parseShare(text: string | undefined): number {
  if (text === undefined) return 0.5
  const match = /^(\d{1,3}(?:\.\d+)?)%?$/.exec(text)
  const percent = match ? Number(match[1]) : NaN
  if (!(percent >= 0 && percent <= 100)) throw new UsageError(`--max-delete takes a percentage from 0% to 100%; got ${text}`)
  return percent / 100
}

/** The API token: from a file (`--token-file`), or from an environment variable, never from an argument. */
function readToken(variable: string | undefined, file: string | undefined, env: Record<string, string | undefined>): { token: string; tokenSource: string; warning?: string } {
  if (file !== undefined) {
    if (variable !== undefined) throw new UsageError('--token-env and --token-file exclude each other: give the token one way')
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      throw new UsageError(`--token-file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    const token = text.trim()
    if (!token || /\s/.test(token)) throw new UsageError(`--token-file ${file} must hold the API token alone, on one line`)
    const mode = statSync(file).mode & 0o777
    const warning = mode & 0o077 ? `--token-file ${file} is readable by others than its user (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 ${file}` : undefined
    return { token, tokenSource: file, warning }
  }
  const tokenVariable = variable ?? 'API_TOKEN'
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenVariable)) throw new UsageError(`--token-env takes the name of an environment variable; got ${tokenVariable}`)
  const token = env[tokenVariable]
  if (!token) throw new UsageError(`the environment variable ${tokenVariable} holding the API token is not set (the token is never taken from an argument)`)
  return { token, tokenSource: tokenVariable }
}

function describeProgress(p: SyncProgress): string {
  const seconds = p.elapsedMs / 1000
  const rate = seconds > 0 ? Math.round(p.rows / seconds) : 0
  const done = p.windowsTotal > 0 ? Math.round((p.windowsDone / p.windowsTotal) * 20) : 0
  const phase = { backfill: 'loading', reconcile: 'reconciling', changes: 'changes' }[p.phase]
  return `${phase} [${'#'.repeat(done)}${'.'.repeat(20 - done)}] window ${p.windowsDone}/${p.windowsTotal}  ${p.rows} rows read  ${rate} rows/s`
}

function describeSummary(s: SyncSummary, requests: number, waits: number): string {
  const resumed = s.reconcileResumed ? ' (the reconcile an earlier run left unfinished, taken up and finished)' : ''
  const untracked = s.deletesFollowed === false ? "; the server's data does not record deletes, so deleted tickets leave this mirror with --reconcile only" : ''
  return (
    `mirror current up to ${s.loadedUntil}${s.reconciled ? `, reconciled${resumed}` : ''}: tickets ${s.tickets.inserted} inserted, ${s.tickets.updated} updated, ${s.tickets.deleted} deleted; ` +
    `queues ${s.queues.inserted + s.queues.updated}${deletedOf(s.queues)}, locations ${s.locations.inserted + s.locations.updated}${deletedOf(s.locations)}; ` +
    `${s.windows} window(s), ${requests} request(s), ${waits} wait(s)${untracked}`
  )
}

function deletedOf(count: RowCount): string {
  return count.deleted > 0 ? ` (${count.deleted} deleted)` : ''
}

/** Why a connection failed, in our words (the runtime's own text is long and asks the wrong question). */
function networkReason(error: NetworkError): string {
  const attempts = /after (\d+) attempts/.exec(error.message)?.[1]
  const code = String((error.cause as { code?: unknown } | undefined)?.code ?? error.message)
  const reason = /ECONNREFUSED/.test(code)
    ? 'the connection was refused (nothing listens there)'
    : /ECONNRESET|EPIPE/.test(code)
      ? 'the connection was reset'
      : /ETIMEDOUT|timed out/i.test(code)
        ? 'the connection timed out'
        : /ENOTFOUND|EAI_AGAIN|resolve/i.test(code)
          ? 'the host name does not resolve'
          : error.message.replace(/^no answer from \S+ /, '').split('\n')[0]!
  return attempts ? `${reason}, ${attempts} tries` : reason
}

/** One line that says why and what to do, naming the URL given and never the token or a password. */
function describeFailure(error: unknown, options: SyncCommandOptions): string {
  const url = options.url
  if (error instanceof UnauthorizedError) {
    return `the API at ${url} refused the token in ${options.tokenSource} (401 unauthorized): put a current token of the organisation in ${options.tokenSource}; a revoked, mistyped or cut-off token is refused`
  }
  if (error instanceof NotFoundError) return `the API at ${url} answered 404 not_found: ${error.message}`
  if (error instanceof ApiResponseError) return `the API at ${url} answered ${error.status} ${error.code}: ${error.message}`
  if (error instanceof TimeoutError) return `no byte from ${url} for ${options.timeoutSeconds} s (--timeout): the API stalled`
  if (error instanceof AnswerRefusedError) return `the API at ${url} answered what no answer of this API holds, so it was refused: ${error.message}; nothing of that window was kept`
  if (error instanceof DownloadBrokeError) return `the API at ${url}: a window's download broke off ${WINDOW_ATTEMPTS} times (${error.message.replace(/^the download broke off: /, '')}); the target was not at fault`
  if (error instanceof NetworkError) return `no answer from ${url}: ${networkReason(error)}; check that the API runs at that URL and can be reached from here, then run sync again (every window committed so far is kept)`
  if (error instanceof UnexpectedResponseError) return `${url} answered something that is not this API (${error.message})`
  // A DuckDB mirror's full disk, wherever the engine met it (its shape, a checkpoint): said
  // with the folder and the space, as the target says it for a window (disk-full.ts).
  if (options.target.kind === 'duckdb' && !(error instanceof DiskFullError) && isDiskFull(error)) {
    const folder = dirname(resolve(options.target.path))
    return new DiskFullError(folder, freeBytes(folder), null, 'now').message
  }
  const message = error instanceof Error ? error.message.split('\n')[0]! : String(error)
  if (options.target.kind === 'duckdb' && /lock/i.test(message)) {
    return `the DuckDB file is in use by another process (${message}); a DuckDB file has one writer or many readers, never both: wait for the other sync to end, close the reader, or sync into PostgreSQL for readers that stay connected`
  }
  if (options.target.kind === 'postgresql') {
    const { location } = options.target
    // The server asked for a password and none was given: say where one goes.
    const hint = !location.password && /password/i.test(message) ? ' (no password was given: set PGPASSWORD, or put it in the URL, postgresql://user:password@host/db)' : ''
    return `PostgreSQL at ${location.description}: ${withoutPassword(message, location.password)}${hint}`
  }
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
