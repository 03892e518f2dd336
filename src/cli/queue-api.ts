import { SERVICE_VERSION, serviceRevision } from '../metrics/build-info.ts'
import { escapeTerminal } from './terminal-text.ts'
import { describeStartUpFailure } from '../start-up-failure.ts'
import { serveArgumentsProblem, serveUsage } from './serve-usage.ts'

/**
 * The entry point of the compiled file `dist/queue-api` (scripts/build.ts): one executable that
 * serves (as `npm start` does) and runs the operator's commands (as `npm run -s admin` and
 * `npm run -s sync` do). Each command's code is loaded only when it runs, so `admin` opens no
 * port and the server loads no DuckDB.
 */

const USAGE = `usage: queue-api [serve]           the server, configured by the environment as npm start is
       queue-api admin <command>   the admin CLI (queue-api admin --help)
       queue-api sync [options]    the warehouse loader (queue-api sync --help)
       queue-api health [--ready]  exit 0 when the server of this environment's HOST and PORT is alive (or ready)
       queue-api --version
Each command's --help says more; every one exits 2 with one line on stderr when it cannot start.`

const HEALTH_USAGE = `usage: queue-api health [--ready]
  Asks the server of this environment's HOST and PORT (0.0.0.0 and :: as loopback), within 5 s,
  whether it is alive (GET /healthz: the image's HEALTHCHECK, for restarting), or with --ready
  whether it is ready (GET /readyz: for sending it traffic). Exit status: 0 it answered well; 1 it
  did not, or nothing answered (one line on stderr); 2 a bad setting.`

const [command, ...rest] = process.argv.slice(2)
const wantsHelp = rest.includes('--help') || rest.includes('-h')

switch (command) {
  case undefined:
  case 'serve': {
    // A worker is this file run as `serve --worker=N --supervisor=PID` (src/main.ts).
    const problem = serveArgumentsProblem(rest)
    if (wantsHelp) process.stdout.write(serveUsage('queue-api') + '\n')
    else if (problem === undefined) await import('../main.ts')
    else refuse(problem)
    break
  }
  case 'admin':
    process.exitCode = await (await import('./admin.ts')).runAdminProcess(rest)
    break
  case 'sync':
    {
      // Before sync's code, which loads DuckDB's module as it is imported (--help too).
      const problem = await (await import('./embedded-duckdb.ts')).loadEmbeddedDuckdb().then(() => undefined, tmpDirProblem)
      if (problem !== undefined) {
        process.stderr.write(`queue-api sync: ${problem}\n`)
        process.exitCode = 2
        break
      }
    }
    process.exitCode = await (await import('../sync/cli.ts')).runSyncProcess(rest)
    break
  case 'health':
    // Asked for help, or given what it does not take, it probes nothing.
    if (wantsHelp) process.stdout.write(HEALTH_USAGE + '\n')
    else if (rest.length > 1 || (rest.length === 1 && rest[0] !== '--ready')) {
      refuse(`health takes only --ready (got "${rest.find((arg) => arg !== '--ready') ?? rest[1]}"); it asks the server of this environment's HOST and PORT`)
    } else process.exitCode = await (await import('./health-check.ts')).runHealthCheck({ ready: rest[0] === '--ready' })
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

/** DuckDB's library could not be unpacked to TMPDIR: one line naming it, or a bug's error thrown on. */
function tmpDirProblem(error: unknown): string {
  const directory = process.env.TMPDIR ?? '/tmp'
  const line = describeStartUpFailure(error, { directory, setting: 'TMPDIR' })
  if (line === undefined) throw error
  return `${line} (DuckDB's library is unpacked there)`
}

/** Wrong arguments: one line on stderr, exit status 2, as the admin CLI answers them. */
function refuse(message: string): void {
  process.stderr.write(`queue-api: ${escapeTerminal(message)}\n`)
  process.exitCode = 2
}
