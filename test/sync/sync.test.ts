import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { DuckDBInstance } from '@duckdb/node-api'
import { join } from 'node:path'
import { mkdirSync, readdirSync } from 'node:fs'
import { startServer, openTenant, tempDataDir, type TestServer } from '../support/harness.ts'
import { writeStructure, writeBulkTickets, writeTickets } from '../support/fixtures.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { eventually } from '../support/raw-http.ts'
import { Warehouse } from '../../src/sync/warehouse.ts'
import { runSync } from '../../src/sync/sync.ts'
import { Client } from '../../src/client/index.ts'

const DAY = 86_400_000
/** `sync` cuts its range at the real time of its run, so the data is laid out around it. */
const NOW = Date.now()
const temp = tempDataDir()

interface Tenant {
  server: TestServer
  token: string
  orgId: string
}

/** A server with one organisation holding 200 days of tickets up to now, and a few with every lifecycle field. */
async function tenantServer(overrides: Parameters<typeof startServer>[0]): Promise<Tenant> {
  const server = await startServer(overrides)
  const { org, token } = server.organisation()
  const db = openTenant(server.dataDir, org.id)
  writeStructure(db)
  writeBulkTickets(db, { count: 200 * 36, start: new Date(NOW - 200 * DAY).toISOString(), everySeconds: 2400 })
  writeTickets(db, [
    { id: 'x-noshow', number: 9, queueId: 'q_id', locationId: 'loc_a', status: 'NO_SHOW', createdAt: new Date(NOW - 2 * DAY).toISOString(), calledAt: new Date(NOW - 2 * DAY + 60_000).toISOString(), noShowAt: new Date(NOW - 2 * DAY + 120_000).toISOString(), calledByDeviceSessionId: 'dev_1' },
    { id: 'x-skipped', number: 10, queueId: 'q_zh', locationId: 'loc_b', status: 'SKIPPED', createdAt: new Date(NOW - 3 * DAY).toISOString(), skippedAt: new Date(NOW - 3 * DAY + 5).toISOString() },
  ])
  db.close()
  return { server, token, orgId: org.id }
}

/**
 * `npm run -s sync -- …` as a real process, as documented; `direct` starts the sync process itself
 * (`bun src/sync/cli.ts`), so that a signal reaches it and not npm.
 */
function startSync(tenant: Tenant, args: string[], env: Record<string, string> = {}, direct = false) {
  const command = direct ? [process.execPath, 'src/sync/cli.ts'] : ['npm', 'run', '-s', 'sync', '--']
  return Bun.spawn([...command, ...args], {
    env: { ...process.env, API_TOKEN: tenant.token, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
}

async function sync(tenant: Tenant, args: string[], env: Record<string, string> = {}) {
  const child = startSync(tenant, args, env)
  const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { stdout, stderr, status }
}

/** Rows of a DuckDB file, as JSON values. */
async function query(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(file)
  const connection = await instance.connect()
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

/** The tenant's tickets created in [from, to), as the mirror should hold them. */
function tenantTickets(tenant: Tenant, from: number, to = Date.now() + DAY) {
  const db = new Database(tenantFilePath(tenant.server.dataDir, tenant.orgId), { readonly: true })
  try {
    return db
      .query(
        `SELECT id, number, queue_id, location_id, status, created_at, called_at, completed_at, cancelled_at, skipped_at, no_show_at,
                called_by_device_session_id FROM tickets WHERE created_at >= ? AND created_at < ? ORDER BY id`,
      )
      .all(new Date(from).toISOString(), new Date(to).toISOString()) as Record<string, string | number | null>[]
  } finally {
    db.close()
  }
}

/** The mirror's tickets, timestamps written back in the API's form, for a field-by-field comparison. */
async function mirrorTickets(file: string) {
  const iso = (column: string) => `strftime(${column} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS ${column}`
  const timestamps = ['created_at', 'called_at', 'completed_at', 'cancelled_at', 'skipped_at', 'no_show_at'].map(iso).join(', ')
  return query(file, `SELECT id, number, queue_id, location_id, status, ${timestamps}, called_by_device_session_id FROM tickets ORDER BY id`)
}

let tenant: Tenant
beforeAll(async () => {
  tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
})
afterAll(async () => {
  await tenant.server.close()
  temp.cleanup()
})

describe('sync: the first run', () => {
  const file = join(temp.dir, 'first.duckdb')
  const since = new Date(NOW - 150 * DAY).toISOString()

  test('mirrors the range with explicit types: counts, every field, the catalog', async () => {
    const run = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', since, '--json'])
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    const summary = JSON.parse(run.stdout)
    // Two windows of backfill, then the changes since the first one's token (none).
    expect(summary).toMatchObject({ firstRun: true, windows: 3, locations: { inserted: 4 }, queues: { inserted: 5 }, requests: 4, waits: 0 })
    expect(Date.parse(summary.loadedUntil)).toBeGreaterThanOrEqual(NOW)
    const expected = tenantTickets(tenant, Date.parse(since))
    expect(summary.tickets).toEqual({ inserted: expected.length, updated: 0 })
    expect(await mirrorTickets(file)).toEqual(expected)

    const columns = await query(file, `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'tickets'`)
    expect(Object.fromEntries(columns.map((c) => [c.column_name, c.data_type]))).toEqual({
      id: 'VARCHAR', number: 'INTEGER', queue_id: 'VARCHAR', location_id: 'VARCHAR', status: 'VARCHAR',
      created_at: 'TIMESTAMP WITH TIME ZONE', called_at: 'TIMESTAMP WITH TIME ZONE', completed_at: 'TIMESTAMP WITH TIME ZONE',
      cancelled_at: 'TIMESTAMP WITH TIME ZONE', skipped_at: 'TIMESTAMP WITH TIME ZONE', no_show_at: 'TIMESTAMP WITH TIME ZONE',
      called_by_device_session_id: 'VARCHAR',
    })
    const keys = await query(file, `SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY' ORDER BY table_name`)
    expect(keys.map((k) => k.table_name)).toEqual(['_sync_state', 'locations', 'queues', 'tickets'])
  })

  test('the median-wait command of docs/loading.md, run verbatim on the mirror, prints the table', async () => {
    const docs = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'loading.md')).text()
    const snippet = /```sh\n(npm run -s duckdb -- tickets\.duckdb[\s\S]*?)```/.exec(docs)![1]!
    const run = Bun.spawnSync(['bash', '-c', snippet.replace('tickets.duckdb', file)], { stdout: 'pipe', stderr: 'pipe' })
    expect(run.stderr.toString()).toBe('')
    expect(run.exitCode).toBe(0)
    const lines = run.stdout.toString().split('\n')
    expect(lines[0]).toMatch(/^queue\s+day\s+median_wait_minutes$/)
    expect(lines.find((line) => line.startsWith('Payments'))).toMatch(/^Payments\s+\d{4}-\d{2}-\d{2}\s+0\.5$/)
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

  test("the median-wait query of docs/loading.md runs on the mirror", async () => {
    const rows = await query(
      file,
      `SELECT q.name AS queue, t.created_at::DATE AS day,
              round(median(epoch(t.called_at) - epoch(t.created_at)) / 60, 1) AS median_wait_minutes
         FROM tickets t JOIN queues q ON q.id = t.queue_id
        WHERE t.called_at IS NOT NULL
        GROUP BY ALL ORDER BY day, queue LIMIT 5`,
    )
    expect(rows).toHaveLength(5)
    expect(rows[0]).toMatchObject({ queue: 'Payments', median_wait_minutes: 0.5 })
  })
})

describe('sync: later runs', () => {
  test('a writer changes and inserts tickets; the next run moves exactly those rows and the mirror is equal again', async () => {
    const file = join(temp.dir, 'later.duckdb')
    const since = NOW - 100 * DAY
    expect((await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', new Date(since).toISOString()])).status).toBe(0)

    // The administration application, in its own connection: 3 status changes, 1 personal edit, 2 new tickets.
    const db = openTenant(tenant.server.dataDir, tenant.orgId)
    const ids = (db.query('SELECT id FROM tickets WHERE created_at >= ? ORDER BY created_at LIMIT 4').all(new Date(NOW - 30 * DAY).toISOString()) as { id: string }[]).map((r) => r.id)
    const called = new Date(Date.now() - 1000).toISOString()
    for (const id of ids.slice(0, 3)) db.query("UPDATE tickets SET status = 'CANCELED', cancelled_at = ? WHERE id = ?").run(called, id)
    db.query("UPDATE tickets SET notes = 'not served' WHERE id = ?").run(ids[3]!)
    writeTickets(db, [
      { id: 'new-1', number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: new Date(Date.now() - 500).toISOString() },
      { id: 'new-2', number: 2, queueId: 'q_pay', locationId: 'loc_a', status: 'CALLED', createdAt: new Date(Date.now() - 400).toISOString(), calledAt: called },
    ])
    db.close()

    const second = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--json'])
    expect(second.status).toBe(0)
    expect(JSON.parse(second.stdout)).toMatchObject({ firstRun: false, windows: 1, requests: 2, tickets: { inserted: 2, updated: 3 } })
    expect(await mirrorTickets(file)).toEqual(tenantTickets(tenant, since))

    const third = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--json'])
    expect(JSON.parse(third.stdout)).toMatchObject({ tickets: { inserted: 0, updated: 0 } })
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
      const warehouse = await Warehouse.open(file)
      const now = Date.now()
      const client = new Client({ baseUrl: tenant.server.base, token: tenant.token, onResponse: onFirstAnswer })
      try {
        return await runSync({ client, warehouse, baseUrl: tenant.server.base, since: since, now, tempDir: temp.dir })
      } finally {
        warehouse.close()
      }
    }
    await run(insertOnce('during-first', Date.now() + 200))
    inserted = 0
    await run(insertOnce('during-later', Date.now() + 200))
    const ids = (await query(file, "SELECT id FROM tickets WHERE id LIKE 'during-%' ORDER BY id")).map((r) => r.id)
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

describe('sync: the DuckDB file', () => {
  test("a ticket that came in two windows of the backfill (its created_at changed between the reads) keeps the later copy when the key is added", async () => {
    const file = join(temp.dir, 'twice.duckdb')
    const csv = (status: string) => `id,number,queueId,locationId,status,createdAt,calledAt,completedAt,cancelledAt,skippedAt,noShowAt,calledByDeviceSessionId\r\nt-1,1,q,l,${status},2026-03-01T00:00:00.000Z,,,,,,\r\n`
    await Bun.write(join(temp.dir, 'w1.csv'), csv('WAITING'))
    await Bun.write(join(temp.dir, 'w2.csv'), csv('CALLED'))
    const warehouse = await Warehouse.open(file)
    try {
      await warehouse.transaction(() => warehouse.upsertTicketsCsv(join(temp.dir, 'w1.csv'), false))
      await warehouse.transaction(() => warehouse.upsertTicketsCsv(join(temp.dir, 'w2.csv'), false))
      await warehouse.addTicketKey()
      expect(await warehouse.hasTicketKey()).toBe(true)
    } finally {
      warehouse.close()
    }
    expect(await query(file, 'SELECT id, status FROM tickets')).toEqual([{ id: 't-1', status: 'CALLED' }])
  })
})

describe('sync: wrong input and failures', () => {
  test.each([
    [['--into', 'x.duckdb'], '--url is required'],
    [['--url', 'ftp://x', '--into', 'x.duckdb'], '--url must be an http'],
    [['--url', 'http://127.0.0.1:1'], '--into is required'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--since', 'last tuesday'], '--since is not an RFC 3339 date-time'],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--bogus'], "Unknown option '--bogus'"],
    [['--url', 'http://127.0.0.1:1', '--into', 'x.duckdb', '--token-env', 'NOT_SET_ANYWHERE'], 'NOT_SET_ANYWHERE holding the API token is not set'],
  ])('%p: exit 2 with one line', async (args, message) => {
    const run = await sync(tenant, args)
    expect(run.status).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toContain(message)
  })

  test('a token of an organisation without the API feature: exit 1 with the reason, never the token', async () => {
    const disabled = tenant.server.organisation({ apiEnabled: false }).token
    const run = await sync(tenant, ['--url', tenant.server.base, '--into', join(temp.dir, 'disabled.duckdb'), '--token-env', 'OTHER_TOKEN'], { OTHER_TOKEN: disabled })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('402 api_not_enabled')
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr + run.stdout).not.toContain(disabled)
  })

  test('a file that mirrors another URL, or another --since: exit 2', async () => {
    const file = join(temp.dir, 'first.duckdb')
    const otherUrl = await sync(tenant, ['--url', 'http://127.0.0.1:9', '--into', file])
    expect(otherUrl.status).toBe(2)
    expect(otherUrl.stderr).toContain(`this file mirrors ${tenant.server.base}`)
    const otherSince = await sync(tenant, ['--url', tenant.server.base, '--into', file, '--since', '2020-01-01'])
    expect(otherSince.status).toBe(2)
    expect(otherSince.stderr).toContain('--since is fixed by the first run')
  })
})

describe('sync: stopped half-way', () => {
  for (const signal of ['SIGINT', 'SIGKILL'] as const) {
    test(`${signal} during the backfill: the next run resumes and ends equal, with no duplicate`, async () => {
      // Three requests a minute: /v1/queues and two windows, then the run waits for the minute window.
      const limited = await tenantServer({ rateLimitPerMinute: 3 })
      try {
        const file = join(temp.dir, `stopped-${signal}.duckdb`)
        const since = NOW - 199 * DAY
        const scratch = join(temp.dir, `scratch-${signal}`)
        mkdirSync(scratch)
        const child = startSync(limited, ['--url', limited.server.base, '--into', file, '--since', new Date(since).toISOString()], { TMPDIR: scratch }, true)
        await eventually(() => limited.server.logger.lines.some((line) => line.includes('"status":429')), 30_000, 'the run to wait for the minute window')
        child.kill(signal)
        expect(await child.exited).toBe(signal === 'SIGINT' ? 130 : 137)
        // Interrupted, it takes its temporary window file with it; killed, it cannot.
        if (signal === 'SIGINT') {
          expect(readdirSync(scratch)).toEqual([])
          expect(await new Response(child.stderr).text()).toContain('stopped by SIGINT; every window committed so far is kept')
        }

        const [partial] = await query(file, 'SELECT (SELECT count(*) FROM tickets) AS n, (SELECT epoch_ms(loaded_until) FROM _sync_state) AS until')
        expect(Number(partial!.until)).toBe(since + 180 * DAY)
        expect(Number(partial!.n)).toBe(tenantTickets(limited, since, since + 180 * DAY).length)

        limited.server.clock.advance(61_000)
        const resumed = await sync(limited, ['--url', limited.server.base, '--into', file, '--json'])
        expect(resumed.status).toBe(0)
        const expected = tenantTickets(limited, since)
        // Only what the stopped run had not committed is new.
        expect(JSON.parse(resumed.stdout)).toMatchObject({ firstRun: false, tickets: { inserted: expected.length - Number(partial!.n) } })
        expect(await mirrorTickets(file)).toEqual(expected)
      } finally {
        await limited.server.close()
      }
    }, 60_000)
  }
})
