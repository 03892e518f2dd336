import { SERVICE_VERSION, serviceRevision } from '../metrics/build-info.ts'
import { escapeTerminal } from './terminal-text.ts'

/**
 * The entry point of the compiled file `dist/queue-api` (scripts/build.ts): one executable that
 * serves (as `npm start` does) and runs the operator's commands (as `npm run -s admin` and
 * `npm run -s sync` do). Each command's code is loaded only when it runs, so `admin` opens no
 * port and the server loads no DuckDB.
 */

const USAGE = `usage: queue-api [serve]           the server, configured by the environment as npm start is
       queue-api admin <command>   the admin CLI (queue-api admin --help)
       queue-api sync [options]    the warehouse loader (queue-api sync --help)
       queue-api health            exit 0 when the server of this environment's HOST and PORT is ready
       queue-api --version`

const [command, ...rest] = process.argv.slice(2)
// The flags the supervisor starts a worker with (src/server/workers.ts).
const isWorkerFlag = (arg: string) => arg.startsWith('--worker=') || arg.startsWith('--supervisor=')

switch (command) {
  case undefined:
  case 'serve':
    // A worker is this file run as `serve --worker=N --supervisor=PID` (src/main.ts).
    if (rest.every(isWorkerFlag)) await import('../main.ts')
    else refuse(`serve takes no arguments (got "${rest.find((arg) => !isWorkerFlag(arg))}"); the server is configured by environment variables`)
    break
  case 'admin':
    process.exitCode = (await import('./admin.ts')).runAdminProcess(rest)
    break
  case 'sync':
    await (await import('./embedded-duckdb.ts')).loadEmbeddedDuckdb()
    process.exitCode = await (await import('../sync/cli.ts')).runSyncProcess(rest)
    break
  case 'health':
    process.exitCode = await (await import('./health-check.ts')).runHealthCheck()
    break
  case '--version':
    process.stdout.write(`queue-api ${SERVICE_VERSION} (revision ${serviceRevision()})\n`)
    break
  case 'help':
  case '--help':
    process.stdout.write(USAGE + '\n')
    break
  default:
    refuse(`unknown command "${command}" (queue-api --help lists them)`)
}

/** Wrong arguments: one line on stderr, exit status 2, as the admin CLI answers them. */
function refuse(message: string): void {
  process.stderr.write(`queue-api: ${escapeTerminal(message)}\n`)
  process.exitCode = 2
}
