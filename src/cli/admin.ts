import { ControlStore, ControlStoreError } from '../control/store.ts'
import { ConfigError, loadConfig } from '../config/config.ts'
import { runCommand, USAGE } from './commands.ts'
import { UsageError } from './args.ts'

/**
 * `bun run admin <command>`: the operator's CLI of a self-hosted install (decisions.md §3).
 * With --json it prints exactly one JSON document on stdout. Wrong input prints one line on
 * stderr, nothing on stdout, and exits 2; nothing is half-written.
 */
export function runAdmin(
  argv: string[],
  io: { dataDir: string; now: number; out: (text: string) => void; err: (text: string) => void },
): number {
  if (argv.length === 0) {
    io.err('admin: a command is required (admin --help lists them)\n')
    return 2
  }
  if (argv[0] === '--help' || argv[0] === 'help') {
    io.out(USAGE + '\n')
    return 0
  }
  let store: ControlStore | undefined
  try {
    store = new ControlStore(io.dataDir)
    const result = runCommand(argv, { store, now: io.now })
    io.out(result.wantsJson ? JSON.stringify(result.json) + '\n' : result.text.join('\n') + '\n')
    return 0
  } catch (error) {
    if (error instanceof UsageError || error instanceof ControlStoreError) {
      io.err(`admin: ${error.message}\n`)
      return 2
    }
    io.err(`admin: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  } finally {
    store?.close()
  }
}

if (import.meta.main) {
  let dataDir: string
  try {
    dataDir = loadConfig().dataDir
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`admin: ${error.message}\n`)
    process.exit(2)
  }
  process.exitCode = runAdmin(process.argv.slice(2), {
    dataDir,
    now: Date.now(),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  })
}
