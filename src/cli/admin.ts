import { ControlStore, ControlStoreError } from '../control/store.ts'
import { ConfigError, loadConfig } from '../config/config.ts'
import { DataDirectoryError, ensureWritableDataDirectory } from '../db/writable-data-directory.ts'
import { becomeDataDirectoryOwner } from '../db/data-directory-owner.ts'
import { runCommand } from './commands.ts'
import { runReplicaCommand, runShipCommand } from './replica.ts'
import { adminUsage } from './usage.ts'
import { invokedAs } from './invoked-as.ts'
import { escapeTerminal, terminalSafeJson } from './terminal-text.ts'
import { UsageError } from './args.ts'
import { RestoreFailedError } from '../replica/restore.ts'
import { assertDirectoryOrAbsent, assertWritableFileSystem, describeStartUpFailure } from '../start-up-failure.ts'
import { isReplicaDataDirectory, replicaRefusal } from '../replica/mark.ts'

/**
 * How the admin CLI reports a failure: `usage` (wrong input, exit 2), `configuration` (the
 * environment, exit 2), `unexpected` (exit 1). Without --json one line for a person; with --json
 * exactly one JSON document, so that a script reading stderr can parse it as it parses stdout.
 */
type AdminErrorKind = 'usage' | 'configuration' | 'unexpected'

function errorText(kind: AdminErrorKind, message: string, json: boolean): string {
  const oneLine = message.replace(/\s*\n\s*/g, ' ')
  return json ? terminalSafeJson({ error: kind, message: oneLine }) + '\n' : `admin: ${escapeTerminal(oneLine)}\n`
}

interface AdminIo {
  dataDir: string
  now: number
  out: (text: string) => void
  err: (text: string) => void
}

/**
 * `npm run -s admin -- <command>`: the operator's CLI of a self-hosted install. With --json it
 * prints exactly one JSON document on stdout, or on failure one on stderr. Wrong input says what
 * to do on one line of stderr, prints nothing on stdout, and exits 2; nothing is half-written.
 */
export function runAdmin(argv: string[], io: AdminIo): number {
  const wantsJson = argv.includes('--json')
  const fail = (kind: AdminErrorKind, message: string, status: number) => {
    io.err(errorText(kind, message, wantsJson))
    return status
  }
  if (argv.length === 0) return fail('usage', 'a command is required (admin --help lists them)', 2)
  if (argv[0] === 'help' || argv.includes('--help')) {
    io.out(adminUsage(invokedAs('admin')) + '\n')
    return 0
  }
  let store: ControlStore | undefined
  try {
    // A replica's directory refuses writes first, before anything is checked or changed in it.
    const refusal = replicaRefusalOf(argv, io.dataDir)
    if (refusal !== undefined) return fail('usage', refusal, 2)
    // Checked before either kind of command: a replica's directory is trusted (and made private) alike.
    assertDirectoryOrAbsent(io.dataDir)
    assertWritableFileSystem(io.dataDir)
    ensureWritableDataDirectory(io.dataDir)
    // What others chose (names, ids) reaches a terminal escaped (cli/terminal-text.ts).
    const out = (text: string) => io.out(escapeTerminal(text))
    const result = argv[0] === 'replica' ? runReplicaCommand(argv.slice(1), { ...io, out }) : runCommand(argv, { store: (store = openStore(io.dataDir)), now: io.now })
    io.out(result.wantsJson ? terminalSafeJson(result.json) + '\n' : escapeTerminal(result.text.join('\n')) + '\n')
    return result.status ?? 0
  } catch (error) {
    if (error instanceof UsageError || error instanceof ControlStoreError) return fail('usage', error.message, 2)
    if (error instanceof DataDirectoryError) return fail('configuration', error.message, 2)
    if (error instanceof RestoreFailedError) return fail('unexpected', `restore failed: ${error.message}`, 1)
    // The host refused the data directory (below a file, read-only, full, not a database, …).
    const hostProblem = describeStartUpFailure(error, { dataDir: io.dataDir })
    if (hostProblem !== undefined) return fail('configuration', hostProblem, 2)
    return fail('unexpected', `unexpected error: ${error instanceof Error ? error.message : String(error)}`, 1)
  } finally {
    store?.close()
  }
}

/** Commands that only read, run on a replica's copy without writing it (its control.sqlite opened read-only). */
const READS_ON_A_REPLICA = new Set(['org list', 'token list', 'replica restore'])

/**
 * A replica's data directory (replica/mark.ts) takes no command that writes, nor one that
 * belongs on the writer (Litestream's config, its shipping): one line naming the writer, exit 2.
 */
function replicaRefusalOf(argv: string[], dataDir: string): string | undefined {
  const command = argv.filter((arg) => !arg.startsWith('-')).slice(0, argv[0] === 'seed' || argv[0] === 'migrate' || argv[0] === 'check' ? 1 : 2).join(' ')
  if (READS_ON_A_REPLICA.has(command) || !isReplicaDataDirectory(dataDir)) return undefined
  return replicaRefusal(dataDir, `${command} refused`)
}

/** The control store of `dataDir`, once checked as the server checks it (above): a directory this user cannot write is one line, not a stack trace. */
function openStore(dataDir: string): ControlStore {
  if (isReplicaDataDirectory(dataDir)) return new ControlStore(dataDir, { readOnly: true })
  return new ControlStore(dataDir)
}

/**
 * The admin CLI run by a process: its settings from the environment, its output to stdout and
 * stderr. Returns the exit status; `replica ship`, which runs until stopped, resolves to it.
 */
export function runAdminProcess(argv: string[]): number | Promise<number> {
  let dataDir: string
  try {
    dataDir = loadConfig().dataDir
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(errorText('configuration', error.message, argv.includes('--json')))
    return 2
  }
  try {
    // Root runs admin as the directory's owner, the service (db/data-directory-owner.ts).
    if (!argv.includes('--help')) {
      assertDirectoryOrAbsent(dataDir)
      becomeDataDirectoryOwner(dataDir)
    }
  } catch (error) {
    const line = error instanceof DataDirectoryError ? error.message : describeStartUpFailure(error, { dataDir })
    if (line === undefined) throw error
    process.stderr.write(errorText('configuration', line, argv.includes('--json')))
    return 2
  }
  if (argv[0] === 'replica' && argv[1] === 'ship' && !argv.includes('--help')) {
    const refusal = replicaRefusalOf(argv, dataDir)
    try {
      if (refusal !== undefined) throw new UsageError(refusal)
      ensureWritableDataDirectory(dataDir)
      return runShipCommand(argv.slice(2), { dataDir, out: (text) => process.stdout.write(escapeTerminal(text)) })
    } catch (error) {
      if (error instanceof DataDirectoryError) {
        process.stderr.write(errorText('configuration', error.message, false))
        return 2
      }
      if (!(error instanceof UsageError)) throw error
      process.stderr.write(errorText('usage', error.message, false))
      return 2
    }
  }
  return runAdmin(argv, {
    dataDir,
    now: Date.now(),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  })
}

if (import.meta.main) process.exitCode = await runAdminProcess(process.argv.slice(2))
