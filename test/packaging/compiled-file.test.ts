import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { buildCompiledFile, type CompiledFile } from '../support/compiled-file.ts'
import { runServerProcessToExit, startServerProcess, type ServerProcess } from '../support/server-process.ts'
import { webRoutes } from '../../src/web/routes.ts'
import { createRequestContext } from '../../src/http/context.ts'
import { redisAvailable, startRedis } from '../support/redis-server.ts'

/**
 * `npm run -s build`'s dist/queue-api, run as an operator runs it: from a directory that holds
 * nothing of the checkout, so that every page, script and migration must come from inside it.
 */

let file: CompiledFile
let server: ServerProcess
let dataDir: string
let token: string

beforeAll(async () => {
  file = buildCompiledFile()
  dataDir = join(file.emptyDir, 'data')
  // Standard error is a pipe here, not a terminal: the sample organisation is asked for.
  server = await startServerProcess({ DATA_DIR: dataDir, SAMPLE_DATA: 'on' }, { argv: [file.path], cwd: file.emptyDir })
  const created = file.run(['admin', 'token', 'create', '--org', 'sample', '--name', 'compiled', '--json'], { DATA_DIR: dataDir })
  expect(created.status).toBe(0)
  token = JSON.parse(created.stdout).token
})

afterAll(async () => {
  await server?.stop()
  file?.remove()
})

describe('dist/queue-api serves as npm start does', () => {
  test('every page, stylesheet and script, byte for byte what the checkout serves', async () => {
    const fromSource = webRoutes({ ratePerMinute: 60, demoPerDay: 50 })
    const paths = fromSource.map((route) => route.path).filter((path) => path !== '/openapi.json')
    expect(paths).toEqual(expect.arrayContaining(['/', '/docs', '/favicon.ico', '/assets/app.js', '/assets/swagger-ui/swagger-ui-bundle.js', '/assets/app.css']))
    for (const path of paths) {
      const compiled = await fetch(server.base + path)
      expect({ path, status: compiled.status }).toEqual({ path, status: 200 })
      const route = fromSource.find((candidate) => candidate.path === path)!
      const expected = await (await route.handler(createRequestContext(new Request(`http://source${path}`)))).bytes()
      expect({ path, same: Buffer.from(await compiled.bytes()).equals(Buffer.from(expected)) }).toEqual({ path, same: true })
    }
  })

  test('the API: the sample organisation the first start made, through a token the compiled admin made', async () => {
    const response = await fetch(`${server.base}/v1/queues`, { headers: { Authorization: `Bearer ${token}` } })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { locations: unknown[] }).locations.length).toBeGreaterThan(0)
    expect((await fetch(`${server.base}/readyz`)).status).toBe(200)
  })

  test('queue-api sync loads a DuckDB file (its native library comes from inside the file)', () => {
    const run = file.run(['sync', '--url', server.base, '--into', join(file.emptyDir, 'mirror.duckdb'), '--since', new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10), '--json'], { API_TOKEN: token })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    expect(JSON.parse(run.stdout).tickets.inserted).toBeGreaterThan(0)
  })

  test('queue-api health: 0 while the configured server is alive, 1 (one line) when nothing answers', async () => {
    const port = new URL(server.base).port
    expect(file.run(['health'], { PORT: port }).status).toBe(0)
    const closed = file.run(['health'], { PORT: '1' })
    expect(closed.status).toBe(1)
    expect(closed.stderr).toMatch(/^queue-api health: no answer from http:\/\/127\.0\.0\.1:1\/healthz: .*\n$/)
  })

  test('--version names the release and the commit it was built from', () => {
    const revision = Bun.spawnSync(['git', 'describe', '--always', '--abbrev=12', '--dirty', '--exclude=*']).stdout.toString().trim()
    expect(file.run(['--version']).stdout).toBe(`queue-api 0.1.0 (revision ${revision})\n`)
  })

  test('wrong commands and arguments: one line on stderr, exit 2', () => {
    const unknown = file.run(['serve-me'])
    expect(unknown).toEqual({ status: 2, stdout: '', stderr: 'queue-api: unknown command "serve-me" (queue-api --help lists them)\n' })
    const extra = file.run(['serve', '--port', '80'])
    expect(extra.status).toBe(2)
    expect(extra.stderr).toBe('queue-api: the server takes no arguments (got "--port"); it is configured by environment variables\n')
    const admin = file.run(['admin', 'org', 'frobnicate'], { DATA_DIR: dataDir })
    expect(admin).toEqual({ status: 2, stdout: '', stderr: 'admin: unknown command "org frobnicate" (admin --help lists the commands)\n' })
    expect(file.run(['--help']).stdout).toContain('queue-api admin <command>')
    const badPort = file.run(['health'], { PORT: 'eighty' })
    expect(badPort.status).toBe(2)
    expect(badPort.stderr).toStartWith('queue-api health: configuration error: PORT')
    expect(badPort.stderr.trimEnd().split('\n')).toHaveLength(1)
  })

  test('SIGTERM: drains and exits 0, as npm start does', async () => {
    const another = await startServerProcess({ DATA_DIR: dataDir }, { argv: [file.path], cwd: file.emptyDir })
    expect(await another.stop('SIGTERM')).toBe(0)
    expect(another.output()).toContain('"event":"shutdown_complete"')
  })

  test('the build: an unknown option is one line and exit 2', () => {
    const build = Bun.spawnSync([process.execPath, 'scripts/build.ts', '--out', 'x'], { cwd: join(import.meta.dir, '..', '..'), stdout: 'pipe', stderr: 'pipe' })
    expect(build.exitCode).toBe(2)
    expect(build.stderr.toString()).toBe("build: Unknown option '--out' (the one option is --outfile <path>)\n")
  })
})

describe.if(redisAvailable())('dist/queue-api with WORKERS=2', () => {
  test('the workers are the same file: both serve, and one killed is replaced', async () => {
    const redis = await startRedis()
    const workers = await startServerProcess({ DATA_DIR: dataDir, WORKERS: '2', REDIS_URL: redis.url }, { argv: [file.path], cwd: file.emptyDir })
    try {
      const pids = () => [...workers.output().matchAll(/"worker":(\d),"event":"listening","url":"[^"]+","pid":(\d+)/g)].map((match) => Number(match[2]))
      while (pids().length < 2) await Bun.sleep(20)
      expect((await fetch(`${workers.base}/v1/queues`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200)
      process.kill(pids()[0]!, 'SIGKILL')
      while (pids().length < 3) await Bun.sleep(20)
      expect((await fetch(`${workers.base}/readyz`)).status).toBe(200)
    } finally {
      expect(await workers.stop()).toBe(0)
      await redis.stop()
    }
  })
})

describe('a data directory the service cannot write', () => {
  // As the unprivileged user `nobody`, the way a service account meets a directory root made.
  const asNobody = () => ({ argv: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', file.path], cwd: '/' })
  const start = (dir: string) => runServerProcessToExit({ DATA_DIR: dir, PORT: '0' }, 15_000, asNobody())
  const rootOwned = (name: string, mode: number) => {
    const dir = join(file.emptyDir, name)
    mkdirSync(dir)
    chmodSync(dir, mode)
    return dir
  }

  beforeAll(() => {
    // nobody may run the file and reach the directories below, nothing more
    chmodSync(dirname(file.path), 0o755)
    chmodSync(file.emptyDir, 0o755)
    if (process.getuid?.() !== 0) console.warn('warning: not root; the tests of an unwritable DATA_DIR run as whoever runs them')
  })

  test.if(process.getuid?.() === 0)('root\'s directory, 0755: one line naming the directory and the user, exit 2', async () => {
    const dir = rootOwned('root-0755', 0o755)
    const { status, stdout, stderr } = await start(dir)
    expect({ status, stdout }).toEqual({ status: 2, stdout: '' })
    expect(stderr).toBe(`DATA_DIR ${dir} belongs to user root (uid 0), not to user nobody (uid 65534) running this: run it as its owner, or make that user its owner (chown -R), or set DATA_DIR to a directory it owns\n`)
  })

  test.if(process.getuid?.() === 0)('root\'s private directory, and one that cannot be made in root\'s: the same line, each saying what failed', async () => {
    const closed = rootOwned('root-0700', 0o700)
    const unwritable = await start(closed)
    expect(unwritable.status).toBe(2)
    expect(unwritable.stderr).toStartWith(`DATA_DIR ${closed} belongs to user root (uid 0), not to user nobody (uid 65534) running this: `)
    const parent = rootOwned('root-parent', 0o755)
    const missing = await start(join(parent, 'data'))
    expect(missing.status).toBe(2)
    expect(missing.stderr).toStartWith(`DATA_DIR ${join(parent, 'data')} cannot be created by user nobody (uid 65534) (EACCES): `)
    expect(missing.stderr.trimEnd().split('\n')).toHaveLength(1)
  })
})
