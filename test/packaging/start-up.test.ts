import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { dirname, join } from 'node:path'
import { buildCompiledFile, type CompiledFile } from '../support/compiled-file.ts'
import { runServerProcessToExit, startServerProcess } from '../support/server-process.ts'
import { SETTINGS } from '../../src/config/config.ts'
import { adminUsage } from '../../src/cli/usage.ts'

/**
 * The compiled file as an operator meets it at start: every setting and every refusal of the
 * host is one line on stderr and exit 2 (server, admin, sync); --help on every command; the line
 * that says what started; no sample data unless a person (a terminal) starts it.
 */

let file: CompiledFile
let count = 0
/** A path under the file's empty directory, new each time. */
const fresh = (name: string) => join(file.emptyDir, `${name}-${++count}`)

beforeAll(() => {
  file = buildCompiledFile()
  // nobody may run the file and reach the directories below
  chmodSync(dirname(file.path), 0o755)
  chmodSync(file.emptyDir, 0o755)
})
afterAll(() => file?.remove())

const isRoot = process.getuid?.() === 0
const asNobody = (argv: string[]) => ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...argv]
/** `argv` run with a tmpfs of `options` mounted at `at`, in a mount namespace of its own (root only). */
const inMount = (options: string, at: string, argv: string[]) => ['unshare', '-m', 'sh', '-c', 'mount -t tmpfs -o "$0" tmpfs "$1" && shift && exec "$@"', options, at, ...argv]
const canMount = isRoot && Bun.spawnSync(inMount('ro,size=64k', '/mnt', ['true'])).exitCode === 0

/** The server run to its exit (killed after 15 s if it serves instead). */
function serve(env: Record<string, string>, argv = [file.path]) {
  return runServerProcessToExit({ PORT: '0', DATA_DIR: fresh('data'), SAMPLE_DATA: 'off', ...env }, 15_000, { argv, cwd: file.emptyDir })
}

function run(argv: string[], env: Record<string, string> = {}) {
  const result = Bun.spawnSync(argv, { cwd: file.emptyDir, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  return { status: result.exitCode ?? -1, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
}

/** One line on stderr matching `line`, nothing on stdout, exit 2. */
function expectRefusal(result: { status: number; stdout: string; stderr: string }, line: RegExp) {
  expect({ status: result.status, stdout: result.stdout, lines: result.stderr.split('\n').length }).toEqual({ status: 2, stdout: '', lines: 2 })
  expect(result.stderr).toMatch(line)
}

/** A listener on 127.0.0.1 holding a port, that counts the connections it is offered. */
async function holdPort(): Promise<{ port: number; connections: () => number; close: () => void }> {
  let connections = 0
  const server: Server = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, resolve))
  return { port: (server.address() as { port: number }).port, connections: () => connections, close: () => server.close() }
}

/** A value each setting refuses; a new setting must be added here. */
const BAD_VALUE: Record<string, string> = {
  PORT: 'eighty',
  HOST: ' ',
  DATA_DIR: ' ',
  RATE_LIMIT_PER_MINUTE: '0',
  DEMO_DAILY_QUOTA: 'fifty',
  TENANT_CACHE_SIZE: '-1',
  LOG_LEVEL: 'loud',
  EXPORT_STALL_TIMEOUT_MS: '5',
  EXPORTS_PER_TOKEN: 'two',
  EXPORTS_MAX: '0',
  SHUTDOWN_DRAIN_MS: '1.5',
  REDIS_URL: 'http://127.0.0.1:6379',
  WORKERS: '0',
  METRICS_PORT: '70000',
  METRICS_HOST: '',
  READ_ONLY: 'yes',
  SAMPLE_DATA: 'sometimes',
  REPLICA_MAX_AGE_S: '0',
}

describe('every setting refused: one line naming it, exit 2', () => {
  test('the table covers every setting', () => {
    expect(Object.keys(BAD_VALUE).sort()).toEqual(SETTINGS.map((setting) => setting.env).sort())
  })

  test.each(Object.entries(BAD_VALUE))('%s=%p: the server and admin', async (env, value) => {
    expectRefusal(await serve({ [env]: value }), new RegExp(`^configuration error: ${env} must `))
    expectRefusal(run([file.path, 'admin', 'org', 'list'], { DATA_DIR: fresh('data'), [env]: value }), new RegExp(`^admin: ${env} must `))
  })

  test('settings refused together: WORKERS and READ_ONLY without REDIS_URL, METRICS_PORT equal to PORT', async () => {
    expectRefusal(await serve({ WORKERS: '2' }), /^configuration error: WORKERS=2 needs REDIS_URL/)
    expectRefusal(await serve({ READ_ONLY: '1' }), /^configuration error: READ_ONLY=1 needs REDIS_URL/)
    expectRefusal(await serve({ PORT: '4100', METRICS_PORT: '4100' }), /^configuration error: METRICS_PORT must differ from PORT/)
  })
})

describe('the host refuses the server: one line naming the setting, exit 2', () => {
  test('HOST not an address of this machine (EADDRNOTAVAIL), or no address at all', async () => {
    expectRefusal(await serve({ HOST: '192.0.2.1' }), /^HOST 192\.0\.2\.1 is not an address of this machine \(EADDRNOTAVAIL\): set HOST to one of its addresses/)
    expectRefusal(await serve({ HOST: 'no-such-host.invalid' }), /^PORT 0 on HOST no-such-host\.invalid cannot be listened on \(.+\): set HOST to an address of this machine/)
  })

  test('METRICS_HOST not an address of this machine; METRICS_PORT and PORT in use', async () => {
    expectRefusal(await serve({ METRICS_PORT: '0', METRICS_HOST: '192.0.2.1' }), /^METRICS_HOST 192\.0\.2\.1 is not an address of this machine \(EADDRNOTAVAIL\): set METRICS_HOST/)
    const held = await holdPort()
    try {
      expectRefusal(await serve({ PORT: String(held.port) }), new RegExp(`^PORT ${held.port} on 127\\.0\\.0\\.1 is already in use by another process`))
      expectRefusal(await serve({ METRICS_PORT: String(held.port) }), new RegExp(`^METRICS_PORT ${held.port} on 127\\.0\\.0\\.1 is already in use by another process`))
    } finally {
      held.close()
    }
  })

  test.if(isRoot && readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim() !== '0')('a privileged PORT for a user without the right (EACCES)', async () => {
    expectRefusal(await serve({ PORT: '80' }, asNobody([file.path])), /^PORT 80 on HOST 127\.0\.0\.1 needs a privilege this user lacks \(EACCES\): set PORT to 1024 or above, or grant CAP_NET_BIND_SERVICE/)
  })

  test('DATA_DIR below a regular file (ENOTDIR), or a regular file itself', async () => {
    const regular = fresh('regular-file')
    writeFileSync(regular, 'not a directory')
    expectRefusal(await serve({ DATA_DIR: join(regular, 'data') }), new RegExp(`^DATA_DIR ${regular}/data is not a directory \\(or lies below a file\\) \\(ENOTDIR\\): set DATA_DIR to a directory this user can write`))
    expectRefusal(await serve({ DATA_DIR: regular }), new RegExp(`^DATA_DIR ${regular} is not a directory`))
    // Refused before anything was done to it.
    expect(readFileSync(regular, 'utf8')).toBe('not a directory')
  })

  test('control.sqlite not a database, or a directory in its place', async () => {
    const notDb = fresh('data')
    mkdirSync(notDb, { mode: 0o700 })
    writeFileSync(join(notDb, 'control.sqlite'), 'x'.repeat(4096))
    expectRefusal(await serve({ DATA_DIR: notDb }), new RegExp(`^DATA_DIR ${notDb}: control\\.sqlite is not a SQLite database: restore it from a backup \\(SQLITE_NOTADB\\)$`, 'm'))
    const directory = fresh('data')
    mkdirSync(join(directory, 'control.sqlite'), { recursive: true, mode: 0o700 })
    chmodSync(directory, 0o700)
    // (the trust checks of db/trusted-directory.ts say it first, in a line of their own)
    expectRefusal(await serve({ DATA_DIR: directory }), /control\.sqlite (cannot be opened .* \(SQLITE_CANTOPEN\)|is not a regular file)/)
  })

  test.if(isRoot)('DATA_DIR this user cannot write (permission)', async () => {
    const closed = fresh('root-only')
    mkdirSync(closed, { mode: 0o700 })
    expectRefusal(await serve({ DATA_DIR: closed }, asNobody([file.path])), /^DATA_DIR .*(\(EACCES\)|belongs to user root)/)
  })

  test.if(canMount)('DATA_DIR on a read-only file system (EROFS), and on a full one', async () => {
    const at = fresh('mount')
    mkdirSync(at)
    expectRefusal(await serve({ DATA_DIR: join(at, 'data') }, inMount('ro,size=1m', at, [file.path])), new RegExp(`^DATA_DIR ${at}/data is on a read-only file system \\(EROFS\\): set DATA_DIR to a directory on a writable file system, or READ_ONLY=1 to serve a replica's copy$`, 'm'))
    expectRefusal(await serve({ DATA_DIR: join(at, 'data') }, inMount('size=8k', at, [file.path])), new RegExp(`^DATA_DIR ${at}/data: control\\.sqlite .*the file system is full \\(SQLITE_`))
  })
})

describe('the host refuses admin and sync: one line, exit 2', () => {
  const admin = (dataDir: string, argv: string[] = [file.path]) => run([...argv, 'admin', 'org', 'list'], { DATA_DIR: dataDir })

  test('admin: DATA_DIR below a file or a file, control.sqlite not a database', () => {
    const regular = fresh('regular-file')
    writeFileSync(regular, 'not a directory')
    expectRefusal(admin(join(regular, 'data')), new RegExp(`^admin: DATA_DIR ${regular}/data is not a directory .*\\(ENOTDIR\\)`))
    expectRefusal(admin(regular), new RegExp(`^admin: DATA_DIR ${regular} is not a directory`))
    const notDb = fresh('data')
    mkdirSync(notDb, { mode: 0o700 })
    writeFileSync(join(notDb, 'control.sqlite'), 'x'.repeat(4096))
    expectRefusal(admin(notDb), /^admin: DATA_DIR .*: control\.sqlite is not a SQLite database: restore it from a backup \(SQLITE_NOTADB\)$/m)
    const json = run([file.path, 'admin', 'org', 'list', '--json'], { DATA_DIR: notDb })
    expect(json.status).toBe(2)
    expect(JSON.parse(json.stderr)).toEqual({ error: 'configuration', message: expect.stringContaining('SQLITE_NOTADB') })
  })

  test.if(canMount)('admin: a read-only and a full file system', () => {
    const at = fresh('mount')
    mkdirSync(at)
    expectRefusal(admin(join(at, 'data'), inMount('ro,size=1m', at, [file.path])), /^admin: DATA_DIR .* is on a read-only file system \(EROFS\): set DATA_DIR to a directory on a writable file system/)
    expectRefusal(admin(join(at, 'data'), inMount('size=8k', at, [file.path])), /^admin: DATA_DIR .*the file system is full \(SQLITE_/)
  })

  test('sync: --into below a file, in a directory this user cannot write, TMPDIR missing', () => {
    const sync = (args: string[], env: Record<string, string> = {}, argv = [file.path]) => run([...argv, 'sync', '--url', 'http://127.0.0.1:1', ...args], { API_TOKEN: 'svc_x', ...env })
    const regular = fresh('regular-file')
    writeFileSync(regular, 'not a directory')
    expectRefusal(sync(['--into', join(regular, 'm.duckdb')]), new RegExp(`^sync: --into ${regular}/m\\.duckdb \\(${regular}\\) is not a directory .*\\(ENOTDIR\\): give --into a path in a directory this user can write`))
    expectRefusal(sync(['--into', join(fresh('missing'), 'm.duckdb')]), /^sync: --into .* does not exist \(ENOENT\)/)
    if (isRoot) {
      const closed = fresh('root-only')
      mkdirSync(closed, { mode: 0o755 })
      expectRefusal(sync(['--into', join(closed, 'm.duckdb')], {}, asNobody([file.path])), /^sync: --into .* cannot be read or written by this user \(EACCES\)/)
    }
    const noTmp = fresh('no-tmp')
    expectRefusal(sync(['--into', join(file.emptyDir, 'm.duckdb')], { TMPDIR: noTmp }), new RegExp(`^queue-api sync: TMPDIR ${noTmp}( \\(.*\\))? does not exist \\(ENOENT\\): set TMPDIR to a directory this user can write \\(DuckDB's library is unpacked there\\)$`, 'm'))
  })
})

describe('--help on every command: usage naming queue-api, exit 0, nothing done', () => {
  const help = (...args: string[]) => run([file.path, ...args, '--help'], { DATA_DIR: fresh('untouched') })

  test('queue-api, serve, health, sync', async () => {
    for (const args of [[], ['serve'], ['help']]) {
      const result = args[0] === 'help' ? run([file.path, 'help']) : help(...args)
      expect({ args, status: result.status, stderr: result.stderr }).toEqual({ args, status: 0, stderr: '' })
      expect(result.stdout).toStartWith(args[0] === 'serve' ? 'usage: queue-api\n' : 'usage: queue-api [serve]')
    }
    // health --help asks no server: a listener on its PORT is offered no connection.
    const held = await holdPort()
    try {
      const result = run([file.path, 'health', '--help'], { PORT: String(held.port) })
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
      expect(result.stdout).toStartWith('usage: queue-api health [--ready]\n')
      await Bun.sleep(100)
      expect(held.connections()).toBe(0)
      expectRefusal(run([file.path, 'health', 'now'], { PORT: String(held.port) }), /^queue-api: health takes only --ready \(got "now"\)/)
      expect(held.connections()).toBe(0)
    } finally {
      held.close()
    }
    for (const args of [['sync'], ['sync', '--no-such-option'], ['sync', '--url', 'x']]) {
      const result = help(...args)
      expect({ args, status: result.status, stderr: result.stderr }).toEqual({ args, status: 0, stderr: '' })
      expect(result.stdout).toStartWith('usage: queue-api sync --url <base URL>')
    }
  })

  test('admin and each of its commands; org delete --help deletes nothing', () => {
    const commands = [...adminUsage('x').matchAll(/^ {2}admin ((?:[a-z-]+ )?[a-z-]+)/gm)].map((match) => match[1]!.split(' ').filter((word) => !word.startsWith('-')))
    expect(commands.length).toBeGreaterThanOrEqual(12)
    for (const args of [[], ...commands]) {
      const result = help('admin', ...args)
      expect({ args, status: result.status, stderr: result.stderr }).toEqual({ args, status: 0, stderr: '' })
      expect(result.stdout).toStartWith('usage: queue-api admin <command> [options]')
    }
    const dataDir = fresh('data')
    expect(run([file.path, 'admin', 'org', 'create', '--name', 'Kept'], { DATA_DIR: dataDir }).status).toBe(0)
    expect(run([file.path, 'admin', 'org', 'delete', 'kept', '--yes', '--help'], { DATA_DIR: dataDir }).status).toBe(0)
    expect(run([file.path, 'admin', 'org', 'list'], { DATA_DIR: dataDir }).stdout).toContain(' kept ')
  })

  test('a serve --help starts nothing: no data directory is made', () => {
    const dataDir = fresh('untouched')
    expect(run([file.path, 'serve', '--help'], { DATA_DIR: dataDir }).status).toBe(0)
    expect(existsSync(dataDir)).toBe(false)
  })
})

describe('the start-up line, at any LOG_LEVEL', () => {
  const revision = Bun.spawnSync(['git', 'describe', '--always', '--abbrev=12', '--dirty', '--exclude=*']).stdout.toString().trim()

  test('LOG_LEVEL=error: started names the release, the revision, the workers and the settings changed', async () => {
    const server = await startServerProcess({ DATA_DIR: fresh('data'), LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '120', SAMPLE_DATA: 'off' }, { argv: [file.path], cwd: file.emptyDir })
    await server.stop()
    const lines = server.output().trim().split('\n').map((line) => JSON.parse(line))
    const started = lines.filter((line) => line.event === 'started')
    expect(started).toEqual([
      {
        time: expect.any(String),
        level: 'info',
        event: 'started',
        version: '0.1.0',
        revision,
        url: server.base,
        workers: 1,
        pid: server.process.pid,
        settings: { PORT: 0, DATA_DIR: 'set', LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: 120, SAMPLE_DATA: 'off' },
      },
    ])
    // Nothing else at info: the level still holds for every other line.
    expect(lines.filter((line) => line.level === 'info' && line.event !== 'started')).toEqual([])
  })

  test.if(canMount)('LOG_LEVEL=error: tcp_migrate_req_off is said when the host has it off, and not when on', async () => {
    // A network namespace of its own, where the test sets net.ipv4.tcp_migrate_req.
    const inNetns = (value: number) => ['unshare', '-n', 'sh', '-c', `ip link set lo up && sysctl -qw net.ipv4.tcp_migrate_req=${value} && exec "$0"`, file.path]
    for (const value of [0, 1]) {
      const server = await startServerProcess({ DATA_DIR: fresh('data'), LOG_LEVEL: 'error', SAMPLE_DATA: 'off' }, { argv: inNetns(value), cwd: file.emptyDir })
      while (!server.output().includes('"event":"started"')) await Bun.sleep(20)
      await server.stop()
      const hints = server.output().split('\n').filter((line) => line.includes('"event":"tcp_migrate_req_off"'))
      expect({ value, hints: hints.length }).toEqual({ value, hints: value === 0 ? 1 : 0 })
    }
  })
})

describe('sample data only for a person at a terminal', () => {
  const orgs = (dataDir: string) => JSON.parse(run([file.path, 'admin', 'org', 'list', '--json'], { DATA_DIR: dataDir }).stdout).organisations

  test('SAMPLE_DATA unset, standard error not a terminal (a unit, an image, a script): no organisation, no token', async () => {
    const dataDir = fresh('data')
    const server = await startServerProcess({ DATA_DIR: dataDir, SAMPLE_DATA: '' }, { argv: ['env', '-u', 'SAMPLE_DATA', file.path], cwd: file.emptyDir })
    await server.stop()
    expect(orgs(dataDir)).toEqual([])
  })

  test('SAMPLE_DATA=on without a terminal: the organisation, but no token made or printed; the line says how to make one', async () => {
    const dataDir = fresh('data')
    const server = await startServerProcess({ DATA_DIR: dataDir, SAMPLE_DATA: 'on', LOG_LEVEL: 'debug' }, { argv: [file.path], cwd: file.emptyDir })
    await server.stop()
    const result = { stdout: server.output(), stderr: await new Response(server.process.stderr).text() }
    expect(result.stderr).toMatch(/^Created a sample organisation \(slug sample\) with \d+ generated tickets\. Its token is not printed, as standard error is not a terminal: make one with `queue-api admin token create --org sample --name mine`\.\n$/)
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/svc_/i)
    expect(orgs(dataDir).map((org: { slug: string }) => org.slug)).toEqual(['sample'])
    expect(JSON.parse(run([file.path, 'admin', 'token', 'list', '--org', 'sample', '--json'], { DATA_DIR: dataDir }).stdout).tokens).toEqual([])
  })

  test('at a terminal: SAMPLE_DATA unset makes it and shows its token, which works; off makes nothing', async () => {
    // `script` gives the server a pseudo-terminal, as a person's shell does.
    const atTerminal = async (dataDir: string, sampleData: string | undefined) => {
      const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' } as Record<string, string>
      if (sampleData === undefined) delete env.SAMPLE_DATA
      else env.SAMPLE_DATA = sampleData
      const child = Bun.spawn(['script', '-qefc', file.path, '/dev/null'], { cwd: file.emptyDir, env, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
      let text = ''
      const reader = child.stdout.getReader()
      const deadline = Date.now() + 20_000
      while (!text.includes('"event":"started"') && Date.now() < deadline) {
        const { done, value } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      // SIGTERM to the server itself (its pid is in the line), then script ends with it.
      const pid = Number(/"event":"started".*?"pid":(\d+)/.exec(text)?.[1])
      return {
        text,
        stop: async () => {
          if (pid > 0) process.kill(pid, 'SIGTERM')
          else child.kill('SIGKILL')
          await child.exited
        },
      }
    }
    const dataDir = fresh('data')
    const person = await atTerminal(dataDir, undefined)
    try {
      const token = /export API_TOKEN=(svc_\S+)/.exec(person.text)?.[1]
      const url = /"event":"started".*?"url":"([^"]+)"/.exec(person.text)?.[1]
      expect(token).toBeDefined()
      expect((await fetch(`${url}/v1/queues`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200)
    } finally {
      await person.stop()
    }
    const off = fresh('data')
    const offRun = await atTerminal(off, 'off')
    await offRun.stop()
    expect(offRun.text).toContain('"event":"started"')
    expect(offRun.text).not.toContain('Created a sample organisation')
    expect(orgs(off)).toEqual([])
  })

  test('the systemd unit and the image turn it off', () => {
    const root = join(import.meta.dir, '..', '..')
    expect(readFileSync(join(root, 'deploy/systemd/queue-api.service'), 'utf8')).toMatch(/^Environment=SAMPLE_DATA=off$/m)
    expect(readFileSync(join(root, 'deploy/container/Containerfile'), 'utf8')).toMatch(/^ENV .*\bSAMPLE_DATA=off\b/m)
  })
})
