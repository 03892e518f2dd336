import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
  // openssl makes the certificates of the TLS tests; Debian's PostgreSQL server pulls it in.
  if (binDir && Bun.which('psql') && Bun.which('openssl')) return true
  if (process.env.CI === 'true') throw new Error('PostgreSQL (or openssl) is not installed: CI installs them with scripts/install-postgres.sh')
  console.warn('warning: PostgreSQL or openssl is not installed here; the PostgreSQL tests are skipped (apt-get install postgresql openssl, or scripts/install-postgres.sh)')
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
  /**
   * Turns TLS on with a certificate for 127.0.0.1 signed by a CA made here; returns that CA's
   * file and another CA's, which did not sign it (for the verification that must fail).
   */
  enableTls(): { caFile: string; otherCaFile: string }
  /** Puts pg_hba.conf lines before the others (the first line that matches decides) and reloads. */
  addHbaRules(lines: string[]): void
  stop(): Promise<void>
}

const started = new Set<string>()
// Whatever happens to the test run, no cluster outlives it.
process.on('exit', () => {
  for (const dir of started) Bun.spawnSync(asServerUser([join(binDir!, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', 'stop']))
})

const runningAsRoot = userInfo().uid === 0

/** The `postgres` user's uid and gid (-1 when there is none). */
function postgresId(flag: '-u' | '-g'): number {
  const id = Bun.spawnSync(['id', flag, 'postgres'], { stdout: 'pipe', stderr: 'pipe' })
  return id.exitCode === 0 ? Number(id.stdout.toString()) : -1
}
const serverUid = () => postgresId('-u')
const serverGid = () => postgresId('-g')

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
    if (serverUid() < 0) throw new Error('PostgreSQL refuses to run as root and there is no postgres user to run it as')
    chownSync(dir, serverUid(), serverGid())
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
    enableTls() {
      const tls = join(dir, 'tls')
      mkdirSync(tls)
      const ca = (name: string) =>
        run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(tls, `${name}.key`),
          '-out', join(tls, `${name}.crt`), '-subj', `/CN=${name}`, '-days', '2'], 'openssl (a CA)', false)
      ca('test-ca')
      ca('other-ca')
      writeFileSync(join(tls, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n')
      run(['openssl', 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(tls, 'server.key'),
        '-out', join(tls, 'server.csr'), '-subj', '/CN=127.0.0.1'], 'openssl (the server key)', false)
      run(['openssl', 'x509', '-req', '-in', join(tls, 'server.csr'), '-CA', join(tls, 'test-ca.crt'), '-CAkey', join(tls, 'test-ca.key'),
        '-CAcreateserial', '-out', join(tls, 'server.crt'), '-days', '2', '-extfile', join(tls, 'san.ext')], 'openssl (the server certificate)', false)
      // The server reads its key only when it alone may read it.
      if (runningAsRoot) for (const file of ['server.key', 'server.crt']) chownSync(join(tls, file), serverUid(), serverGid())
      chmodSync(join(tls, 'server.key'), 0o600)
      chmodSync(tls, 0o755)
      psql('postgres', `ALTER SYSTEM SET ssl_cert_file = '${join(tls, 'server.crt')}'`)
      psql('postgres', `ALTER SYSTEM SET ssl_key_file = '${join(tls, 'server.key')}'`)
      psql('postgres', 'ALTER SYSTEM SET ssl = on')
      psql('postgres', 'SELECT pg_reload_conf()')
      return { caFile: join(tls, 'test-ca.crt'), otherCaFile: join(tls, 'other-ca.crt') }
    },
    addHbaRules(lines) {
      const hba = join(data, 'pg_hba.conf')
      writeFileSync(hba, lines.join('\n') + '\n' + readFileSync(hba, 'utf8'))
      psql('postgres', 'SELECT pg_reload_conf()')
    },
    async stop() {
      if (!started.delete(dir)) return
      Bun.spawnSync(asServerUser([join(binDir!, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
