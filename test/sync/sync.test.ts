import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { queryDuckDb } from '../support/duckdb-query.ts'
import { join } from 'node:path'
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { startServerProcess } from '../support/server-process.ts'
import { openTenant, tempDataDir } from '../support/harness.ts'
import { writeTickets } from '../support/fixtures.ts'
import { DAY, startSync, sync, tenantServer, type Tenant } from '../support/sync-target-suite.ts'
import { eventually } from '../support/raw-http.ts'
import { DuckDbTarget } from '../../src/sync/duckdb-target.ts'
import { runSync, type SyncProgress } from '../../src/sync/sync.ts'
import { Client } from '../../src/client/index.ts'
import { childrenOf } from '../support/processes.ts'
import { generateToken } from '../../src/auth/token.ts'

/**
 * `sync` apart from what every target must do (test/support/sync-target-suite.ts, run by
 * duckdb-target.test.ts and postgres-target.test.ts): the documented DuckDB commands, tickets
 * created while a run goes on, wrong input and the messages of failures.
 */

const NOW = Date.now()
const temp = tempDataDir()
/** A token of the service's form (its checksum right) that no organisation holds. */
const UNKNOWN_TOKEN = generateToken()

let tenant: Tenant
beforeAll(async () => {
  tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
})
afterAll(async () => {
  await tenant.server.close()
  temp.cleanup()
})

describe('sync: the DuckDB commands of docs/loading.md', () => {
  const file = join(temp.dir, 'first.duckdb')
  const since = new Date(NOW - 150 * DAY).toISOString()

  beforeAll(async () => {
    const run = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', since, '--json'])
    expect(run.status).toBe(0)
  })

  test('the median-wait command of docs/loading.md, run verbatim on the mirror, prints the table', async () => {
    const docs = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'loading.md')).text()
    const snippet = /```sh\n(npm run -s duckdb -- tickets\.duckdb[\s\S]*?)```/.exec(docs)![1]!
    const run = Bun.spawnSync(['bash', '-c', snippet.replace('tickets.duckdb', file)], { stdout: 'pipe', stderr: 'pipe' })
    expect(run.stderr.toString()).toBe('')
    expect(run.exitCode).toBe(0)
    const lines = run.stdout.toString().split('\n')
    expect(lines[0]).toMatch(/^location\s+queue\s+day\s+median_wait_minutes$/)
    expect(lines.find((line) => / Payments /.test(line))).toMatch(/^\S.*\s+Payments\s+\d{4}-\d{2}-\d{2}\s+0\.5$/)
  })

  test('duckdb: wrong usage exits 2, a bad query 1, each with one line', async () => {
    const usage = Bun.spawnSync(['npm', 'run', '-s', 'duckdb', '--', file], { stdout: 'pipe', stderr: 'pipe' })
    expect(usage.exitCode).toBe(2)
    expect(usage.stderr.toString()).toStartWith('usage: npm run -s duckdb')
    const bad = Bun.spawnSync(['npm', 'run', '-s', 'duckdb', '--', file, 'SELECT nope FROM tickets'], { stdout: 'pipe', stderr: 'pipe' })
    expect(bad.exitCode).toBe(1)
    expect(bad.stderr.toString().trim().split('\n')).toHaveLength(1)
    expect(bad.stdout.toString()).toBe('')
  })

  test("the documented query's days do not follow the process's time zone", async () => {
    const docs = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'loading.md')).text()
    const snippet = /```sh\n(npm run -s duckdb -- tickets\.duckdb[\s\S]*?)```/.exec(docs)![1]!
    const inZone = (zone: string) =>
      Bun.spawnSync(['bash', '-c', snippet.replace('tickets.duckdb', file)], { env: { ...process.env, TZ: zone }, stdout: 'pipe', stderr: 'pipe' }).stdout.toString()
    const utc = inZone('UTC')
    expect(utc.split('\n').length).toBeGreaterThan(10)
    expect(inZone('Pacific/Auckland')).toBe(utc)
  })
})

describe('sync: tickets created while a run goes on', () => {
  test('a ticket created after the run started, before the server read, is loaded (first run and later runs)', async () => {
    const file = join(temp.dir, 'during.duckdb')
    const since = Date.now() - 20 * DAY
    let inserted = 0
    // The administration application inserts a ticket created just after the run's start, as the
    // run's first answer (/v1/queues) arrives: before any range is read.
    const insertOnce = (id: string, createdAt: number) => () => {
      if (inserted++ > 0) return
      const db = openTenant(tenant.server.dataDir, tenant.orgId)
      writeTickets(db, [{ id, number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: new Date(createdAt).toISOString() }])
      db.close()
    }
    const run = async (onFirstAnswer: () => void) => {
      const target = await DuckDbTarget.open(file)
      const now = Date.now()
      const client = new Client({ baseUrl: tenant.server.base, token: tenant.token, onResponse: onFirstAnswer })
      try {
        return await runSync({ client, target, baseUrl: tenant.server.base, since: since, now })
      } finally {
        await target.close()
      }
    }
    await run(insertOnce('during-first', Date.now() + 200))
    inserted = 0
    await run(insertOnce('during-later', Date.now() + 200))
    const ids = (await queryDuckDb(file, "SELECT id FROM tickets WHERE id LIKE 'during-%' ORDER BY id")).map((r) => r.id)
    expect(ids).toEqual(['during-first', 'during-later'])
  })

  test('a first run that fails before its first window leaves the file free for the right URL', async () => {
    const file = join(temp.dir, 'wrong-url-first.duckdb')
    const wrong = await sync(tenant, ['--url', 'http://127.0.0.1:9', '--into', file])
    expect(wrong.status).toBe(1)
    const right = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--json'])
    expect(right.stderr).toBe('')
    expect(JSON.parse(right.stdout)).toMatchObject({ firstRun: true })
  }, 30_000)
})

describe('sync: progress', () => {
  test('a first run counts its windows out of one total; a reconcile that changes nothing is labelled so and shows the rows it reads', async () => {
    const file = join(temp.dir, 'progress.duckdb')
    const since = Date.now() - 150 * DAY
    const run = async (reconcile: boolean) => {
      const target = await DuckDbTarget.open(file)
      const seen: SyncProgress[] = []
      try {
        await runSync({ client: new Client({ baseUrl: tenant.server.base, token: tenant.token }), target, baseUrl: tenant.server.base, since, now: Date.now(), reconcile, onProgress: (p) => seen.push(p) })
      } finally {
        await target.close()
      }
      return seen
    }
    // A first run: every window of the backfill counted out of the same total, in order.
    const first = (await run(false)).filter((p) => p.phase === 'backfill')
    expect(first.length).toBeGreaterThan(0)
    expect(new Set(first.map((p) => p.windowsTotal))).toEqual(new Set([2]))
    expect(first.map((p) => p.windowsDone)).toEqual([...first.map((p) => p.windowsDone)].sort((a, b) => a - b))
    const seen = await run(true)
    // A reconcile's windows are labelled as such from its first byte, none as loading.
    expect(seen.filter((p) => p.phase === 'backfill')).toEqual([])
    expect(seen[0]!.phase).toBe('reconcile')
    const last = seen.filter((p) => p.phase === 'reconcile').at(-1)!
    const [{ n }] = (await queryDuckDb(file, 'SELECT count(*) AS n FROM tickets')) as [{ n: string }]
    expect(last.rows).toBe(Number(n))
    expect(last.windowsDone).toBe(last.windowsTotal)
  })
})

describe('sync: wrong input and failures', () => {
  test.each([
    [['--into', 'x.duckdb'], '--url is required'],
    [['--url', 'ftp://x', '--into', 'x.duckdb'], '--url must be an http'],
    [['--url', 'http://127.0.0.1:1'], '--into is required'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--since', 'last tuesday'], '--since is not an RFC 3339 date-time'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--bogus'], 'unknown option "--bogus" (sync --help lists the options)'],
    [['--url', 'http://127.0.0.1:1', '--into', 'mysql://me:s3cret@db.example/warehouse'], 'mysql:// is not supported'],
    [['--url', 'http://127.0.0.1:1', '--into', 'tickets.txt'], 'ends in .duckdb'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--schema', 'analytics'], '--schema applies to a PostgreSQL target only'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db', '--schema', 'no-dashes'], '--schema takes a lower-case name'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db', '--schema', 'Analytics'], 'got Analytics: use --schema analytics'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db', '--schema', 'select'], '--schema select is a reserved word in PostgreSQL'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db', '--schema', 'pg_foo'], 'names starting with pg_ are reserved'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db', '--grant', 'BI'], '--grant takes a lower-case name'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--grant', 'bi'], '--grant applies to a PostgreSQL target only'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--timeout', 'soon'], '--timeout takes a number of seconds'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/'], '--into needs a host and a database'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db?ssl=true'], 'the URL parameter ssl is not supported; sync reads sslmode and sslrootcert'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db?sslmode=always'], 'sslmode always is not one of disable, allow, prefer, require, verify-ca, verify-full'],
    [['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me:s3cret@127.0.0.1:1/db?sslmode=verify-full&sslrootcert=/no/such/ca.pem'], 'sslrootcert /no/such/ca.pem does not exist'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--since', '2999-01-01'], '--since must be in the past'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--token-env', 'NOT_SET_ANYWHERE'], 'NOT_SET_ANYWHERE holding the API token is not set'],
  ])('%p: exit 2 with one line', async (args, message) => {
    const run = await sync(tenant, args)
    expect(run.status).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toContain(message)
    // A password given in a URL is never repeated.
    expect(run.stderr).not.toContain('s3cret')
  })

  test('a wrong PGSSLMODE or PGSSLROOTCERT is named as the variable it came from: exit 2 with one line', async () => {
    for (const [env, message] of [
      [{ PGSSLMODE: 'no-verify' }, 'PGSSLMODE no-verify is not one of disable, allow, prefer, require, verify-ca, verify-full'],
      [{ PGSSLMODE: 'verify-full', PGSSLROOTCERT: '/no/such/ca.pem' }, 'PGSSLROOTCERT /no/such/ca.pem does not exist'],
    ] as const) {
      const run = await sync(tenant, ['--url', 'http://127.0.0.1:1', '--into', 'postgresql://me@127.0.0.1:1/db'], env)
      expect(run.status).toBe(2)
      expect(run.stderr.trim().split('\n')).toHaveLength(1)
      expect(run.stderr).toContain(message)
    }
  })

  test('wrong input leaves no file behind, and a file that was there stays', async () => {
    const file = join(temp.dir, 'never.duckdb')
    expect((await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', '2999-01-01'])).status).toBe(2)
    expect(existsSync(file)).toBe(false)
    // A URL that another file mirrors is found only once the file is open: that file was there before, and stays.
    const mirrored = join(temp.dir, 'mirrored.duckdb')
    expect((await sync(tenant, ['--url', tenant.server.base, '--into', mirrored, '--since', new Date(NOW - 5 * DAY).toISOString()])).status).toBe(0)
    const copy = join(temp.dir, 'copy.duckdb')
    await Bun.write(copy, Bun.file(mirrored))
    const other = await sync(tenant, ['--url', 'http://127.0.0.1:9', '--into', copy])
    expect(other.status).toBe(2)
    expect(existsSync(copy)).toBe(true)
  })

  test('a refused token: exit 1, the URL given and what to do, never the token', async () => {
    const run = await sync(tenant, ['--url', tenant.server.base, '--into', join(temp.dir, 'refused.duckdb')], { API_TOKEN: UNKNOWN_TOKEN })
    expect(run.status).toBe(1)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toContain(`the API at ${tenant.server.base} refused the token in API_TOKEN`)
    expect(run.stderr).toContain('put a current token of the organisation in API_TOKEN')
    expect(run.stderr).not.toContain('administration application')
    expect(run.stderr).not.toContain(UNKNOWN_TOKEN.slice(4, 20))
  })

  test('--url ending in /v1: wrong input (exit 2) that says to leave /v1 out; no file is left', async () => {
    const file = join(temp.dir, 'v1.duckdb')
    const run = await sync(tenant, ['--url', `${tenant.server.base}/v1`, '--into', file])
    expect(run.status).toBe(2)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toContain(`without /v1: try --url ${tenant.server.base}`)
    expect(existsSync(file)).toBe(false)
  })

  test('a first run refused by the API (a wrong token) leaves no file behind', async () => {
    const file = join(temp.dir, 'refused-first.duckdb')
    const run = await sync(tenant, ['--url', tenant.server.base, '--into', file], { API_TOKEN: UNKNOWN_TOKEN })
    expect(run.status).toBe(1)
    expect(existsSync(file)).toBe(false)
  })

  test('--json: a failure prints one JSON document on stdout as well as the line on stderr', async () => {
    const usage = await sync(tenant, ['--url', tenant.server.base, '--into', join(temp.dir, 'json.duckdb'), '--json', '--timeout', '0'])
    expect(usage.status).toBe(2)
    expect(JSON.parse(usage.stdout)).toEqual({ error: 'usage', message: expect.stringContaining('--timeout takes a number of seconds') })
    expect(usage.stderr.trim().split('\n')).toHaveLength(1)
    const refused = await sync(tenant, ['--url', tenant.server.base, '--into', join(temp.dir, 'json.duckdb'), '--json'], { API_TOKEN: UNKNOWN_TOKEN })
    expect(refused.status).toBe(1)
    expect(JSON.parse(refused.stdout)).toEqual({ error: 'failure', message: expect.stringContaining('refused the token in API_TOKEN') })
    expect(refused.stderr).not.toContain('every window committed')
  })

  test('--quiet prints nothing on success; --token-file reads the token; wrong ones exit 2', async () => {
    const file = join(temp.dir, 'quiet.duckdb')
    const tokenFile = join(temp.dir, 'token')
    writeFileSync(tokenFile, `${tenant.token}\n`, { mode: 0o600 })
    const run = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--quiet', '--token-file', tokenFile], { API_TOKEN: '' })
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 0, stdout: '', stderr: '' })
    // Readable by others: one warning line, even with --quiet (cron mails it); the run goes on.
    chmodSync(tokenFile, 0o644)
    const open = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--quiet', '--token-file', tokenFile], { API_TOKEN: '' })
    expect({ status: open.status, stdout: open.stdout }).toEqual({ status: 0, stdout: '' })
    expect(open.stderr).toBe(`sync: warning: --token-file ${tokenFile} is readable by others than its user (mode 0644): chmod 600 ${tokenFile}\n`)
    chmodSync(tokenFile, 0o600)
    const missing = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--token-file', join(temp.dir, 'no-such-token')])
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain('--token-file')
    const both = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--token-file', tokenFile, '--token-env', 'API_TOKEN'])
    expect(both.status).toBe(2)
    expect(both.stderr).toContain('exclude each other')
  })

  test('a stalled API (its process stopped): --timeout ends the run with exit 1 and one line, the committed windows kept', async () => {
    const file = join(temp.dir, 'stalled.duckdb')
    const process_ = await startServerProcess({ DATA_DIR: tenant.server.dataDir, RATE_LIMIT_PER_MINUTE: '1000' })
    try {
      expect((await sync(tenant, ['--url', process_.base, '--into', file, '--since', new Date(NOW - 20 * DAY).toISOString()])).status).toBe(0)
      const before = await queryDuckDb(file, 'SELECT count(*) AS n FROM tickets')
      // The supervisor and its worker: the worker is what answers.
      const service = [process_.process.pid, ...childrenOf(process_.process.pid)]
      expect(service).toHaveLength(2)
      for (const pid of service) process.kill(pid, 'SIGSTOP')
      const started = Date.now()
      const run = await sync(tenant, ['--url', process_.base, '--into', file, '--timeout', '2', '--json'])
      for (const pid of service) process.kill(pid, 'SIGCONT')
      expect(run.status).toBe(1)
      expect(Date.now() - started).toBeLessThan(20_000)
      expect(run.stderr.trim().split('\n')).toHaveLength(1)
      expect(run.stderr).toContain(`no byte from ${process_.base} for 2 s (--timeout)`)
      expect(JSON.parse(run.stdout)).toMatchObject({ error: 'timeout' })
      expect(await queryDuckDb(file, 'SELECT count(*) AS n FROM tickets')).toEqual(before)
    } finally {
      for (const pid of [process_.process.pid, ...childrenOf(process_.process.pid)]) process.kill(pid, 'SIGCONT')
      await process_.stop()
    }
  }, 60_000)

  test('no server at the URL: exit 1 naming the URL given, not a path of the API', async () => {
    const run = await sync(tenant, ['--url', 'http://127.0.0.1:9', '--into', join(temp.dir, 'nothing.duckdb')])
    expect(run.status).toBe(1)
    expect(run.stderr).toStartWith('sync: no answer from http://127.0.0.1:9: the connection was refused (nothing listens there), 4 tries; check that the API runs at that URL')
    expect(run.stderr).not.toContain('/v1/queues')
    // The runtime's own words ask the wrong question.
    expect(run.stderr).not.toContain('Is the computer able to access the url')
  }, 30_000)

  test('a DuckDB file another process holds: exit 1 with the one-writer rule and the advice', async () => {
    const file = join(temp.dir, 'held.duckdb')
    const reader = await DuckDBInstance.create(file)
    try {
      const run = await sync(tenant, ['--url', tenant.server.base, '--into', file])
      expect(run.status).toBe(1)
      expect(run.stderr.trim().split('\n')).toHaveLength(1)
      expect(run.stderr).toContain('the DuckDB file is in use by another process')
      expect(run.stderr).toContain('sync into PostgreSQL for readers that stay connected')
    } finally {
      reader.closeSync()
    }
  })

  test('a token of an organisation without the API feature: exit 1 with the reason, never the token', async () => {
    const disabled = tenant.server.organisation({ apiEnabled: false }).token
    const run = await sync(tenant, ['--url', tenant.server.base, '--into', join(temp.dir, 'disabled.duckdb'), '--token-env', 'OTHER_TOKEN'], { OTHER_TOKEN: disabled })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('402 api_not_enabled')
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr + run.stdout).not.toContain(disabled)
  })
})

describe('sync: Ctrl-C', () => {
  test('SIGINT during the backfill: exit 130, the windows committed are kept, no temporary file is left', async () => {
    // Three requests a minute: /v1/queues and two windows, then the run waits for the minute window.
    const limited = await tenantServer({ rateLimitPerMinute: 3 })
    try {
      const file = join(temp.dir, 'interrupted.duckdb')
      const scratch = join(temp.dir, 'scratch-sigint')
      mkdirSync(scratch)
      const since = NOW - 199 * DAY
      const child = startSync(limited, ['--url', limited.server.base, '--into', file, '--since', new Date(since).toISOString()], { TMPDIR: scratch }, true)
      await eventually(() => limited.server.logger.lines.some((line) => line.includes('"status":429')), 30_000, 'the run to wait for the minute window')
      child.kill('SIGINT')
      expect(await child.exited).toBe(130)
      expect(await new Response(child.stderr).text()).toContain('stopped by SIGINT; every window committed so far is kept')
      expect(readdirSync(scratch)).toEqual([])
      const [state] = await queryDuckDb(file, 'SELECT epoch_ms(loaded_until) AS until FROM _sync_state')
      expect(Number(state!.until)).toBe(since + 180 * DAY)
    } finally {
      await limited.server.close()
    }
  }, 60_000)
})

describe('sync: what it sends and what it is told (before any request)', () => {
  test('a token not of the service\'s form (a password, a cut-off or mistyped token) is exit 2 with one line, never sent nor printed', async () => {
    const before = tenant.server.logger.lines.length
    const good = generateToken()
    for (const token of ['password=hunter2-secret', good.slice(0, -1), `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`, `${good}x`]) {
      for (const json of [[], ['--json']]) {
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', join(temp.dir, 'shape.duckdb'), ...json], { API_TOKEN: token })
        expect(run.status).toBe(2)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toStartWith('sync: API_TOKEN does not hold an API token of this service')
        expect(run.stderr + run.stdout).not.toContain(token.slice(4, 24))
        if (json.length) expect(JSON.parse(run.stdout)).toMatchObject({ error: 'usage' })
      }
    }
    expect(existsSync(join(temp.dir, 'shape.duckdb'))).toBe(false)
    // Nothing reached the server.
    expect(tenant.server.logger.lines.slice(before).filter((line) => line.includes('"path"'))).toEqual([])
  })

  test('a PostgreSQL URL with a bad % escape, --schema information_schema, --grant public, a wrong --max-delete: exit 2 with one line (with --json the error document)', async () => {
    const cases: [string[], string][] = [
      [['--into', 'postgresql://loader:pa%zzss@127.0.0.1:5432/warehouse'], "--into: the URL's password is not percent-encoded correctly"],
      [['--into', 'postgresql://lo%e9der@127.0.0.1:5432/warehouse'], "--into: the URL's user name is not percent-encoded correctly"],
      [['--into', 'postgresql://loader@127.0.0.1:5432/ware%house'], "--into: the URL's database name is not percent-encoded correctly"],
      [['--into', 'postgresql://loader@127.0.0.1:5432/warehouse', '--schema', 'information_schema'], '--schema information_schema is PostgreSQL\'s own catalog'],
      [['--into', 'postgresql://loader@127.0.0.1:5432/warehouse', '--grant', 'public'], '--grant public would give every role of the database read access'],
      [['--into', join(temp.dir, 'md.duckdb'), '--max-delete', '150%'], '--max-delete takes a percentage from 0% to 100%; got 150%'],
      [['--into', join(temp.dir, 'md.duckdb'), '--max-delete', 'lots'], '--max-delete takes a percentage'],
    ]
    for (const [args, message] of cases) {
      for (const json of [[], ['--json']]) {
        const run = await sync(tenant, ['--url', tenant.server.base, ...args, ...json])
        expect(run.status).toBe(2)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain(message)
        expect(run.stderr).not.toContain('zzss')
        expect(run.stderr).not.toContain('URIError')
        if (json.length) expect(JSON.parse(run.stdout)).toEqual({ error: 'usage', message: expect.stringContaining(message) })
      }
    }
  })

  test('--help says the first run starts at 00:00 UTC 90 days ago, and a first run without --since does', async () => {
    const help = await sync(tenant, ['--help'])
    expect(help.stdout).toContain('(default: 00:00 UTC of the day 90 days ago)')
    const file = join(temp.dir, 'day.duckdb')
    expect((await sync(tenant, ['--url', tenant.server.base, '--into', file])).status).toBe(0)
    const [state] = await queryDuckDb(file, `SELECT epoch_ms(since) AS since FROM _sync_state`)
    const since = Number(state!.since)
    expect(since % DAY).toBe(0)
    expect(Date.now() - since).toBeGreaterThan(90 * DAY)
    expect(Date.now() - since).toBeLessThanOrEqual(91 * DAY)
  })

  test("terminal escapes sent by a server are printed escaped, by sync's failure line and by npm run -s duckdb", async () => {
    const evil = '\u001b]0;owned\u0007\u001b[2J'
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => Response.json({ error: 'invalid_request', message: `bad ${evil} request`, requestId: 'r' }, { status: 400 }),
    })
    try {
      const run = await sync(tenant, ['--url', `http://127.0.0.1:${server.port}`, '--into', join(temp.dir, 'evil.duckdb')])
      expect(run.status).not.toBe(0)
      expect(run.stderr).not.toContain('\u001b')
      expect(run.stderr).toContain('bad \\x1b]0;owned\\x07\\x1b[2J request')
    } finally {
      server.stop(true)
    }
    const file = join(temp.dir, 'evil-names.duckdb')
    const instance = await DuckDBInstance.create(file)
    const connection = await instance.connect()
    await connection.run(`CREATE TABLE locations AS SELECT 'x' AS id, '${evil}Zürich' AS name`)
    connection.closeSync()
    instance.closeSync()
    const child = Bun.spawn(['npm', 'run', '-s', 'duckdb', '--', file, 'SELECT name AS "n\u001b[2J" FROM locations'], { stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    expect(stderr).toBe('')
    expect(status).toBe(0)
    expect(stdout).not.toContain('\u001b')
    expect(stdout).toContain('\\x1b]0;owned\\x07\\x1b[2JZürich')
    expect(stdout).toContain('n\\x1b[2J')
  })
})
