import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.ts'

/**
 * A real PostgreSQL (Debian's `postgresql` package) for the tests of `sync --into postgresql://…`
 * and the benchmark's `sync` scenario: a new cluster made by `initdb` in a temp directory,
 * started by `pg_ctl` on a free loopback port with its socket in that directory, stopped and
 * removed by `stop()`. PostgreSQL refuses to run as root, so when the tests run as root the
 * cluster is made and run as the `postgres` user (which Debian's package creates).
 * Without the server binaries the tests skip with a warning; in CI (CI=true) they fail, since CI
 * installs them (scripts/install-postgres.sh).
 */

/** Debian installs the server programs outside PATH, under /usr/lib/postgresql/<major>/bin. */
function serverBinDir(): string | null {
  const fromPath = Bun.which('pg_ctl')
  if (fromPath) return join(fromPath, '..')
  for (const major of ['18', '17', '16', '15', '14', '13']) {
    const dir = `/usr/lib/postgresql/${major}/bin`
    if (existsSync(join(dir, 'pg_ctl'))) return dir
  }
  return null
}

const binDir = serverBinDir()

/** Whether the PostgreSQL tests can run; prints why not, and throws in CI. */
export function postgresAvailable(): boolean {
  if (binDir && Bun.which('psql')) return true
  if (process.env.CI === 'true') throw new Error('PostgreSQL is not installed: CI installs it with scripts/install-postgres.sh')
  console.warn('warning: PostgreSQL is not installed here; the PostgreSQL tests are skipped (apt-get install postgresql, or scripts/install-postgres.sh)')
  return false
}

export interface PostgresServer {
  port: number
  /** The superuser's URL (no password: the cluster trusts loopback connections). */
  url: string
  /** A new empty database on the cluster; its URL. */
  createDatabase(name: string): Promise<string>
  /** Runs SQL with psql on a database; its unaligned, tuples-only output. */
  psql(database: string, sql: string): string
  stop(): Promise<void>
}

const started = new Set<string>()
// Whatever happens to the test run, no cluster outlives it.
process.on('exit', () => {
  for (const dir of started) Bun.spawnSync(asServerUser([join(binDir!, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', 'stop']))
})

const runningAsRoot = userInfo().uid === 0

/** A command as the user that runs the cluster: `postgres` when we are root, ourselves otherwise. */
function asServerUser(command: string[]): string[] {
  return runningAsRoot ? ['runuser', '-u', 'postgres', '--', ...command] : command
}

function run(command: string[], what: string, asServer = true): string {
  const result = Bun.spawnSync(asServer ? asServerUser(command) : command, { stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`${what} failed: ${(result.stderr.toString() || result.stdout.toString()).trim().slice(-500)}`)
  return result.stdout.toString()
}

export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'qa-api-postgres-'))
  if (runningAsRoot) {
    const id = (flag: string) => Bun.spawnSync(['id', flag, 'postgres'], { stdout: 'pipe', stderr: 'pipe' })
    if (id('-u').exitCode !== 0) throw new Error('PostgreSQL refuses to run as root and there is no postgres user to run it as')
    chownSync(dir, Number(id('-u').stdout.toString()), Number(id('-g').stdout.toString()))
  }
  chmodSync(dir, 0o700)
  const data = join(dir, 'data')
  run([join(binDir!, 'initdb'), '-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'], 'initdb')
  started.add(dir)
  let port = 0
  // A free port can be taken between finding it and the server binding it: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort()
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off`
    try {
      run([join(binDir!, 'pg_ctl'), '-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '30', 'start'], 'pg_ctl start')
      break
    } catch (error) {
      if (attempt === 2) {
        started.delete(dir)
        rmSync(dir, { recursive: true, force: true })
        throw error
      }
    }
  }
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`
  const psql = (database: string, sql: string) =>
    run(['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-c', sql], 'psql', false).trim()
  return {
    port,
    url,
    psql,
    async createDatabase(name) {
      psql('postgres', `CREATE DATABASE "${name}"`)
      return `postgresql://postgres@127.0.0.1:${port}/${name}`
    },
    async stop() {
      if (!started.delete(dir)) return
      Bun.spawnSync(asServerUser([join(binDir!, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
