import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { startServer, openTenant, tempDataDir, type TestServer } from './harness.ts'
import { writeStructure, writeBulkTickets, writeLocationZones, writeTickets } from './fixtures.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { eventually } from './raw-http.ts'
import { Client } from '../../src/client/index.ts'
import { runSync } from '../../src/sync/sync.ts'
import { DownloadBrokeError } from '../../src/sync/download-watch.ts'
import { startFlakyProxy } from './flaky-proxy.ts'
import { openTarget, parseTarget } from '../../src/sync/open-target.ts'
import { runAdmin } from '../../src/cli/admin.ts'

/**
 * The behaviour `sync` must show on every warehouse target (src/sync/target.ts): each target's
 * test file calls `syncTargetSuite` with a harness that makes a new, empty target of its engine
 * and reads it over a connection of its own. Every run is `npm run -s sync` (or `bun
 * src/sync/cli.ts` where a signal must reach it) as a real process against a real server.
 */

export interface TargetHarness {
  name: string
  /** A new, empty target: the `--into` value (and any further options, such as --schema). */
  fresh(label: string): Promise<string[]>
  /** Environment the sync process needs for this target (PGPASSWORD, …). */
  env?: Record<string, string>
  /** Runs one query on the target over a connection of its own; rows as plain objects. */
  query(into: string[], sql: string): Promise<Record<string, unknown>[]>
  /** An SQL expression that writes a timestamp column as the API does (…T…Z, milliseconds), NULL kept. */
  iso(column: string): string
  /** `tickets`' column types as the target's catalog names them. */
  ticketTypes(into: string[]): Promise<Record<string, string>>
  /** Every comment of the mirror's tables, columns and views, keyed `table` or `table.column` (null where none). */
  comments(into: string[]): Promise<Record<string, string | null>>
  expectedTicketTypes: Record<string, string>
}

export const DAY = 86_400_000
/** `sync` cuts its range at the real time of its run, so the data is laid out around it. */
const NOW = Date.now()

export interface Tenant {
  server: TestServer
  token: string
  orgId: string
}

/** A server with one organisation holding 200 days of tickets up to now, and a few with every lifecycle field. */
export async function tenantServer(overrides: Parameters<typeof startServer>[0]): Promise<Tenant> {
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

/** `npm run -s sync -- …` as a real process, as documented; `direct` starts `bun src/sync/cli.ts` itself, so that a signal reaches it and not npm. */
export function startSync(tenant: Tenant, args: string[], env: Record<string, string> = {}, direct = false) {
  const command = direct ? [process.execPath, 'src/sync/cli.ts'] : ['npm', 'run', '-s', 'sync', '--']
  return Bun.spawn([...command, ...args], { env: { ...process.env, API_TOKEN: tenant.token, ...env }, stdout: 'pipe', stderr: 'pipe' })
}

export async function sync(tenant: Tenant, args: string[], env: Record<string, string> = {}) {
  const child = startSync(tenant, args, env)
  const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { stdout, stderr, status }
}

/** The tenant's tickets created in [from, to), as the mirror should hold them, by id. */
export function tenantTickets(tenant: Tenant, from: number, to = Date.now() + DAY) {
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

export function syncTargetSuite(harness: TargetHarness) {
  const { name } = harness
  const timestamps = ['created_at', 'called_at', 'completed_at', 'cancelled_at', 'skipped_at', 'no_show_at']
  /** The mirror's tickets in the tenant's form, for a field-by-field comparison. */
  const mirrorTickets = async (into: string[]): Promise<Record<string, unknown>[]> =>
    (
      await harness.query(
        into,
        `SELECT id, number, queue_id, location_id, status, ${timestamps.map((c) => `${harness.iso(c)} AS ${c}`).join(', ')}, called_by_device_session_id
           FROM tickets ORDER BY id`,
      )
    ).map((row) => ({ ...row, number: Number(row.number) }))
  const duplicates = async (into: string[]) => Number((await harness.query(into, 'SELECT count(*) - count(DISTINCT id) AS n FROM tickets'))[0]!.n)
  const env = harness.env ?? {}

  /**
   * A tenant of the test's own (what the test changes in it is no other test's), a fresh target
   * `label` mirroring it from `since` by a first run (exit 0), then `body`; the server closed after.
   */
  const withOwnMirror = async (label: string, since: number, body: (own: Tenant, into: string[]) => Promise<void>) => {
    const into = await harness.fresh(label)
    const own = await tenantServer({ rateLimitPerMinute: 100_000 })
    try {
      expect((await sync(own, ['--url', own.server.base, '--into', ...into, '--since', new Date(since).toISOString()], env)).status).toBe(0)
      await body(own, into)
    } finally {
      await own.server.close()
    }
  }

  let tenant: Tenant
  const temp = tempDataDir()
  beforeAll(async () => {
    tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
  })
  afterAll(async () => {
    await tenant.server.close()
    temp.cleanup()
  })

  describe(`${name}: the first run`, () => {
    test('mirrors the range with explicit types: counts, every field, the catalog, one row per id', async () => {
      const into = await harness.fresh('first')
      const since = new Date(NOW - 150 * DAY).toISOString()
      const run = await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', since, '--json'], env)
      expect(run.stderr).toBe('')
      expect(run.status).toBe(0)
      const summary = JSON.parse(run.stdout)
      // Two windows of backfill, then the changes since the first one's token (none), and the
      // deletes since it over the two windows of the mirrored range (a page each).
      expect(summary).toMatchObject({ firstRun: true, reconciled: false, windows: 3, locations: { inserted: 4 }, queues: { inserted: 5 }, requests: 6, waits: 0, deletesFollowed: true })
      expect(Date.parse(summary.loadedUntil)).toBeGreaterThanOrEqual(NOW)
      const expected = tenantTickets(tenant, Date.parse(since))
      expect(summary.tickets).toEqual({ inserted: expected.length, updated: 0, deleted: 0 })
      expect(await mirrorTickets(into)).toEqual(expected)
      expect(await duplicates(into)).toBe(0)
      expect(await harness.ticketTypes(into)).toEqual(harness.expectedTicketTypes)
      const queues = await harness.query(into, 'SELECT id, location_id, name, slug, status FROM queues ORDER BY id')
      expect(queues).toHaveLength(5)
      expect(queues[0]).toEqual({ id: expect.any(String), location_id: expect.any(String), name: expect.any(String), slug: expect.any(String), status: expect.any(String) })
    })
  })

  describe(`${name}: later runs`, () => {
    test('a writer changes and inserts tickets; the next run moves exactly those rows and the mirror is equal again', async () => {
      const into = await harness.fresh('later')
      const since = NOW - 100 * DAY
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', new Date(since).toISOString()], env)).status).toBe(0)

      // The administration application, in its own connection: 3 status changes, 1 personal edit, 2 new tickets.
      const db = openTenant(tenant.server.dataDir, tenant.orgId)
      const ids = (db.query('SELECT id FROM tickets WHERE created_at >= ? ORDER BY created_at LIMIT 4').all(new Date(NOW - 30 * DAY).toISOString()) as { id: string }[]).map((r) => r.id)
      const called = new Date(Date.now() - 1000).toISOString()
      for (const id of ids.slice(0, 3)) db.query("UPDATE tickets SET status = 'CANCELED', cancelled_at = ? WHERE id = ?").run(called, id)
      db.query("UPDATE tickets SET notes = 'not served' WHERE id = ?").run(ids[3]!)
      writeTickets(db, [
        { id: `${name}-new-1`, number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: new Date(Date.now() - 500).toISOString() },
        { id: `${name}-new-2`, number: 2, queueId: 'q_pay', locationId: 'loc_a', status: 'CALLED', createdAt: new Date(Date.now() - 400).toISOString(), calledAt: called },
      ])
      db.close()

      const second = await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--json'], env)
      expect(second.status).toBe(0)
      // /v1/queues, the check that the stored token is this organisation's, the changes, and the
      // deletes since the token over the two windows of the mirrored range.
      expect(JSON.parse(second.stdout)).toMatchObject({ firstRun: false, windows: 1, requests: 5, tickets: { inserted: 2, updated: 3, deleted: 0 } })
      expect(await mirrorTickets(into)).toEqual(tenantTickets(tenant, since))
      expect(await duplicates(into)).toBe(0)

      const third = await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--json'], env)
      expect(JSON.parse(third.stdout)).toMatchObject({ tickets: { inserted: 0, updated: 0, deleted: 0 } })
    })

    test('a target that mirrors another URL, or another --since: exit 2 with one line, the target untouched', async () => {
      const into = await harness.fresh('other')
      const since = new Date(NOW - 10 * DAY).toISOString()
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', since], env)).status).toBe(0)
      const before = await mirrorTickets(into)
      const otherUrl = await sync(tenant, ['--url', 'http://127.0.0.1:9', '--into', ...into], env)
      expect(otherUrl.status).toBe(2)
      expect(otherUrl.stderr).toContain(`mirrors ${tenant.server.base}`)
      expect(otherUrl.stderr.trim().split('\n')).toHaveLength(1)
      const otherSince = await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', '2020-01-01'], env)
      expect(otherSince.status).toBe(2)
      expect(otherSince.stderr).toContain('--since is fixed by the first run')
      expect(await mirrorTickets(into)).toEqual(before)
    })
  })

  describe(`${name}: one organisation per mirror`, () => {
    test("another organisation's token: exit 2 with one line, nothing changed (tickets, locations, queues, state)", async () => {
      const into = await harness.fresh('other-org')
      const since = new Date(NOW - 10 * DAY).toISOString()
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', since], env)).status).toBe(0)
      const snapshot = async () => ({
        tickets: await mirrorTickets(into),
        locations: await harness.query(into, 'SELECT * FROM locations ORDER BY id'),
        queues: await harness.query(into, 'SELECT * FROM queues ORDER BY id'),
        state: await harness.query(into, `SELECT changes_token, ${harness.iso('loaded_until')} AS loaded_until FROM _sync_state`),
      })
      const before = await snapshot()
      const { org, token } = tenant.server.organisation()
      const db = openTenant(tenant.server.dataDir, org.id)
      writeStructure(db)
      writeTickets(db, [{ id: 'theirs-1', number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: new Date(NOW - DAY).toISOString() }])
      db.close()
      const theirs: Tenant = { server: tenant.server, token, orgId: org.id }
      for (const extra of [[], ['--reconcile']]) {
        const run = await sync(theirs, ['--url', tenant.server.base, '--into', ...into, ...extra], env)
        expect(run.status).toBe(2)
        expect(run.stderr).toContain('mirrors another organisation than the token')
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
      }
      expect(await snapshot()).toEqual(before)
    })

    test("a mirror without a changes token (the server's files at schema version 2): another organisation's token is exit 2, nothing changed", async () => {
      const into = await harness.fresh('other-org-untracked')
      const own = await tenantServer({ rateLimitPerMinute: 100_000 })
      try {
        const admin = (...argv: string[]) => runAdmin(argv, { dataDir: own.server.dataDir, now: Date.now(), out: () => {}, err: () => {} })
        expect(admin('migrate', '--to', '2')).toBe(0)
        expect((await sync(own, ['--url', own.server.base, '--into', ...into, '--since', new Date(NOW - 10 * DAY).toISOString()], env)).status).toBe(0)
        expect(await harness.query(into, 'SELECT changes_token FROM _sync_state')).toEqual([{ changes_token: null }])
        const snapshot = async () => ({
          tickets: await mirrorTickets(into),
          locations: await harness.query(into, 'SELECT * FROM locations ORDER BY id'),
          state: await harness.query(into, `SELECT ${harness.iso('loaded_until')} AS loaded_until FROM _sync_state`),
        })
        const before = await snapshot()
        const { org, token } = own.server.organisation()
        const db = openTenant(own.server.dataDir, org.id)
        db.exec(`INSERT INTO locations (id, name, slug) VALUES ('loc_theirs', 'Elsewhere', 'elsewhere');
          INSERT INTO queues (id, location_id, name, slug, status) VALUES ('q_theirs', 'loc_theirs', 'Desk', 'desk', 'ACTIVE')`)
        writeTickets(db, [{ id: 'theirs-1', number: 1, queueId: 'q_theirs', locationId: 'loc_theirs', status: 'WAITING', createdAt: new Date(NOW - DAY).toISOString() }])
        db.close()
        expect(admin('migrate', '--to', '2')).toBe(0)
        for (const extra of [[], ['--reconcile']]) {
          const run = await sync({ server: own.server, token, orgId: org.id }, ['--url', own.server.base, '--into', ...into, ...extra], env)
          expect(run.status).toBe(2)
          expect(run.stderr).toContain('mirrors another organisation than the token')
          expect(run.stderr.trim().split('\n')).toHaveLength(1)
        }
        expect(await snapshot()).toEqual(before)
      } finally {
        await own.server.close()
      }
    })

    test("a mirror of the previous release (no _synced_at, no ticket_details) refused for another organisation's token keeps its shape", async () => {
      const into = await harness.fresh('other-org-previous')
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', new Date(NOW - 10 * DAY).toISOString()], env)).status).toBe(0)
      await harness.query(into, 'DROP VIEW ticket_details')
      for (const table of ['tickets', 'queues', 'locations']) await harness.query(into, `ALTER TABLE ${table} DROP COLUMN _synced_at`)
      const shape = async () => ({
        syncedAt: await harness.query(into, `SELECT count(*) AS n FROM information_schema.columns WHERE column_name = '_synced_at' AND table_schema = current_schema()`),
        views: await harness.query(into, `SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'ticket_details' AND table_schema = current_schema()`),
        comments: await harness.comments(into),
      })
      const before = await shape()
      expect(Number(before.syncedAt[0]!.n)).toBe(0)
      const { token } = tenant.server.organisation()
      const run = await sync({ ...tenant, token }, ['--url', tenant.server.base, '--into', ...into], env)
      expect(run.status).toBe(2)
      expect(run.stderr).toContain('mirrors another organisation than the token')
      expect(await shape()).toEqual(before)
    })
  })

  describe(`${name}: a mirror for BI tools`, () => {
    test('a comment on every table, column and view; ticket_details joins the names and computes the waits', async () => {
      const into = await harness.fresh('bi')
      const since = NOW - 10 * DAY
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', new Date(since).toISOString()], env)).status).toBe(0)
      const comments = await harness.comments(into)
      for (const key of ['locations', 'queues', 'tickets', '_sync_state', 'ticket_details', 'tickets._synced_at', 'tickets.called_at', 'queues.location_id']) {
        expect(Object.keys(comments)).toContain(key)
      }
      const missing = Object.entries(comments).filter(([, text]) => !text)
      expect(missing).toEqual([])
      for (const column of ['id', 'created_at', '_synced_at', 'location_name', 'queue_name', 'wait_seconds', 'service_seconds']) expect(comments[`ticket_details.${column}`]).toBeTruthy()

      const details = await harness.query(
        into,
        `SELECT id, location_name, queue_name, wait_seconds, service_seconds FROM ticket_details WHERE id IN ('x-noshow', 'x-skipped') ORDER BY id`,
      )
      const queues = await harness.query(into, `SELECT q.id, q.name AS queue, l.name AS location FROM queues q JOIN locations l ON l.id = q.location_id WHERE q.id IN ('q_id', 'q_zh') ORDER BY q.id`)
      expect(details.map((row): Record<string, unknown> => ({ ...row, wait_seconds: row.wait_seconds === null ? null : Number(row.wait_seconds) }))).toEqual([
        { id: 'x-noshow', location_name: queues[0]!.location, queue_name: queues[0]!.queue, wait_seconds: 60, service_seconds: null },
        { id: 'x-skipped', location_name: queues[1]!.location, queue_name: queues[1]!.queue, wait_seconds: null, service_seconds: null },
      ])
      const [all] = await harness.query(into, 'SELECT count(*) AS n, count(location_name) AS named FROM ticket_details')
      expect(Number(all!.named)).toBe(Number(all!.n))
    })

    test('wait_seconds and service_seconds are exact to the millisecond (DECIMAL(18,3)), the same text in every engine', async () => {
      const into = await harness.fresh('waits-exact')
      const own = await tenantServer({ rateLimitPerMinute: 100_000 })
      try {
        const created = NOW - 2 * DAY + 123
        const db = openTenant(own.server.dataDir, own.orgId)
        writeTickets(db, [{
          id: 'x-exact', number: 11, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: new Date(created).toISOString(),
          calledAt: new Date(created + 79_054).toISOString(), completedAt: new Date(created + 79_054 + 1_001).toISOString(),
        }])
        db.close()
        expect((await sync(own, ['--url', own.server.base, '--into', ...into, '--since', new Date(NOW - 10 * DAY).toISOString()], env)).status).toBe(0)
        expect(await harness.query(into, `SELECT CAST(wait_seconds AS VARCHAR) AS wait, CAST(service_seconds AS VARCHAR) AS service FROM ticket_details WHERE id IN ('x-exact', 'x-noshow') ORDER BY id`)).toEqual([
          { wait: '79.054', service: '1.001' },
          { wait: '60.000', service: null },
        ])
      } finally {
        await own.server.close()
      }
    })

    test("each location's time zone: mirrored, and ticket_details gives created_local and created_local_day in it (a DST change, a day crossed, no zone NULL)", async () => {
      const into = await harness.fresh('zones')
      const own = await tenantServer({ rateLimitPerMinute: 100_000 })
      try {
        // The last change of Zürich's clocks before now: tickets half an hour either side of it.
        const zurich = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Zurich', hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
        const offset = (ms: number) => Date.parse(zurich.format(ms).replace(', ', 'T') + 'Z') - ms
        let change = Math.floor(NOW / 3_600_000) * 3_600_000
        for (let i = 0; i < 24 * 400 && offset(change) === offset(change - 3_600_000); i++) change -= 3_600_000
        const at = (ms: number) => new Date(ms).toISOString()
        const db = openTenant(own.server.dataDir, own.orgId)
        writeLocationZones(db, { loc_a: null, loc_a2: 'Asia/Calcutta', loc_b: 'Europe/Zurich' })
        writeTickets(db, [
          { id: 'z-before', number: 21, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: at(change - 1_800_000) },
          { id: 'z-after', number: 22, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: at(change + 1_800_000) },
          // 20:00 UTC is 01:30 the next day in Kolkata.
          { id: 'z-kolkata', number: 23, queueId: 'q_a2', locationId: 'loc_a2', status: 'WAITING', createdAt: at(Math.floor(NOW / DAY) * DAY - 4 * 3_600_000) },
          { id: 'z-none', number: 24, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: at(NOW - DAY) },
        ])
        db.close()
        const since = new Date(change - 2 * DAY).toISOString()
        expect((await sync(own, ['--url', own.server.base, '--into', ...into, '--since', since], env)).status).toBe(0)
        expect(await harness.query(into, 'SELECT id, time_zone FROM locations ORDER BY id')).toEqual([
          { id: 'loc_a', time_zone: null }, { id: 'loc_a2', time_zone: 'Asia/Kolkata' }, { id: 'loc_b', time_zone: 'Europe/Zurich' }, { id: 'loc_empty', time_zone: null },
        ])
        // What Intl says each ticket's local time is: an independent computation.
        const local = (zone: string, iso: string) =>
          new Intl.DateTimeFormat('en-CA', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(Date.parse(iso)).replace(', ', ' ')
        const own4 = tenantTickets(own, Date.parse(since)).filter((t) => String(t.id).startsWith('z-'))
        const expected = own4.map((t) => {
          const zone = { loc_b: 'Europe/Zurich', loc_a2: 'Asia/Kolkata' }[String(t.location_id)]
          const wall = zone ? local(zone, String(t.created_at)) : null
          return { id: t.id, location_time_zone: zone ?? null, local: wall, day: wall?.slice(0, 10) ?? null }
        })
        const rows = await harness.query(
          into,
          `SELECT id, location_time_zone, CAST(created_local AS VARCHAR) AS local, CAST(created_local_day AS VARCHAR) AS day FROM ticket_details WHERE id LIKE 'z-%' ORDER BY id`,
        )
        expect(rows).toEqual(expected)
        // The clocks did change between the two Zürich tickets: an hour apart in UTC, not in local time.
        const [after, before] = rows.filter((r) => String(r.id).startsWith('z-a') || String(r.id).startsWith('z-b'))
        expect(Math.abs(Date.parse(String(after!.local).replace(' ', 'T') + 'Z') - Date.parse(String(before!.local).replace(' ', 'T') + 'Z'))).not.toBe(3_600_000)
        expect(rows.find((r) => r.id === 'z-kolkata')!.day).not.toBe(String(own4.find((t) => t.id === 'z-kolkata')!.created_at).slice(0, 10))

        // A mirror of the previous shape (no time_zone, the view without local times) is brought up to date in place.
        await harness.query(into, 'DROP VIEW ticket_details')
        await harness.query(into, 'ALTER TABLE locations DROP COLUMN time_zone')
        expect((await sync(own, ['--url', own.server.base, '--into', ...into], env)).status).toBe(0)
        expect(await harness.query(into, `SELECT id, location_time_zone, CAST(created_local AS VARCHAR) AS local, CAST(created_local_day AS VARCHAR) AS day FROM ticket_details WHERE id LIKE 'z-%' ORDER BY id`)).toEqual(expected)
        const comments = await harness.comments(into)
        for (const key of ['locations.time_zone', 'ticket_details.location_time_zone', 'ticket_details.created_local', 'ticket_details.created_local_day']) expect({ key, comment: comments[key] }).toEqual({ key, comment: expect.any(String) })
      } finally {
        await own.server.close()
      }
    })

    test('a zone the engine does not know stops the structure before anything is written, naming the zone and the location', async () => {
      const into = await harness.fresh('unknown-zone')
      const target = await openTarget(parseTarget(into[0]!, into[2], { ...process.env, ...env }))
      try {
        await target.prepare()
        const location = (id: string, timeZone: string | null) => ({ id, name: id, slug: id, timeZone, queues: [] })
        await expect(target.upsertStructure([location('l_ok', 'Asia/Kolkata'), location('l_mars', 'Mars/Olympus_Mons')], false)).rejects.toThrow(
          /(DuckDB|PostgreSQL) does not know the time zone 'Mars\/Olympus_Mons' of location l_mars/,
        )
        expect(await target.locationIds()).toEqual([])
        expect(await target.upsertStructure([location('l_ok', 'Asia/Kolkata'), location('l_none', null)], false)).toMatchObject({ locations: { inserted: 2 } })
      } finally {
        await target.close()
      }
    })

    test('_synced_at: a changed row gets a new one, an unchanged row keeps its own', async () => {
      const since = NOW - 10 * DAY
      await withOwnMirror('synced-at', since, async (own, into) => {
        const stamps = async () =>
          Object.fromEntries((await harness.query(into, `SELECT id, ${harness.iso('_synced_at')} AS at FROM tickets`)).map((row) => [row.id, row.at]))
        const before = await stamps()
        expect(Object.values(before).every((at) => typeof at === 'string')).toBe(true)
        const db = openTenant(own.server.dataDir, own.orgId)
        const [changed, same] = (db.query('SELECT id FROM tickets WHERE created_at >= ? ORDER BY created_at LIMIT 2').all(new Date(since).toISOString()) as { id: string }[]).map((r) => r.id)
        db.query("UPDATE tickets SET status = 'CANCELED', cancelled_at = ? WHERE id = ?").run(new Date().toISOString(), changed!)
        db.close()
        await Bun.sleep(5)
        expect((await sync(own, ['--url', own.server.base, '--into', ...into, '--reconcile'], env)).status).toBe(0)
        const after = await stamps()
        expect(Date.parse(String(after[changed!]))).toBeGreaterThan(Date.parse(String(before[changed!])))
        expect(after[same!]).toBe(before[same!])
      })
    })
  })

  describe(`${name}: a demo organisation`, () => {
    test('its export\'s extra demo column is not mirrored: the first run and a later one equal the tenant, field by field', async () => {
      const { org, token } = tenant.server.organisation({ plan: 'demo' })
      const demo: Tenant = { server: tenant.server, token, orgId: org.id }
      const db = openTenant(tenant.server.dataDir, org.id)
      writeStructure(db)
      writeBulkTickets(db, { count: 120, start: new Date(NOW - 40 * DAY).toISOString(), everySeconds: 28_800 })
      db.close()
      const into = await harness.fresh('demo')
      const since = NOW - 60 * DAY
      const first = await sync(demo, ['--url', tenant.server.base, '--into', ...into, '--since', new Date(since).toISOString(), '--json'], env)
      expect(first.stderr).toBe('')
      expect(first.status).toBe(0)
      expect(JSON.parse(first.stdout).tickets).toEqual({ inserted: 120, updated: 0, deleted: 0 })
      expect(await mirrorTickets(into)).toEqual(tenantTickets(demo, since))
      expect(Object.keys(await harness.ticketTypes(into))).not.toContain('demo')

      const writer = openTenant(tenant.server.dataDir, org.id)
      writeTickets(writer, [{ id: `${name}-demo-new`, number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: new Date(Date.now() - 500).toISOString() }])
      writer.close()
      const second = await sync(demo, ['--url', tenant.server.base, '--into', ...into, '--json'], env)
      expect(second.status).toBe(0)
      expect(JSON.parse(second.stdout).tickets).toEqual({ inserted: 1, updated: 0, deleted: 0 })
      expect(await mirrorTickets(into)).toEqual(tenantTickets(demo, since))
    })
  })

  describe(`${name}: deletes with every run`, () => {
    test("the writer's deletes (tickets old and new, a queue with its tickets, a location with its queue and tickets) reach the mirror in a plain run", async () => {
      const since = NOW - 199 * DAY
      await withOwnMirror('deletes', since, async (own, into) => {
        const db = openTenant(own.server.dataDir, own.orgId)
        // Every 50th ticket, across the 200 days (most older than the trailing 90), as the writer deletes them.
        const doomed = (db.query('SELECT id FROM tickets WHERE created_at >= ? ORDER BY created_at').all(new Date(since).toISOString()) as { id: string }[]).filter((_, i) => i % 50 === 0).map((row) => row.id)
        const remove = db.prepare('DELETE FROM tickets WHERE id = ?')
        db.transaction(() => doomed.forEach((id) => remove.run(id)))()
        // A queue with its tickets, and a whole location with its queue and tickets.
        db.exec(`DELETE FROM tickets WHERE queue_id = 'q_id'; DELETE FROM queues WHERE id = 'q_id';
                 DELETE FROM tickets WHERE location_id = 'loc_b'; DELETE FROM queues WHERE location_id = 'loc_b'; DELETE FROM locations WHERE id = 'loc_b'`)
        // One deleted ticket made again under its id: it is no longer deleted.
        writeTickets(db, [{ id: doomed[1]!, number: 77, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: new Date(NOW - 5 * DAY).toISOString() }])
        db.close()

        const run = await sync(own, ['--url', own.server.base, '--into', ...into, '--json'], env)
        expect(run.stderr).toBe('')
        expect(run.status).toBe(0)
        const summary = JSON.parse(run.stdout)
        // doomed (less the one made again, updated instead), x-noshow (q_id) and x-skipped (loc_b).
        expect(summary).toMatchObject({ reconciled: false, deletesFollowed: true, tickets: { deleted: doomed.length - 1 + 2, inserted: 0, updated: 1 }, locations: { deleted: 1 }, queues: { deleted: 2 } })
        expect(await mirrorTickets(into)).toEqual(tenantTickets(own, since))
        const { locations } = await new Client({ baseUrl: own.server.base, token: own.token }).queues()
        expect((await harness.query(into, 'SELECT id FROM locations ORDER BY id')).map((row) => row.id)).toEqual(locations.map((l) => l.id).sort())
        expect((await harness.query(into, 'SELECT id FROM queues ORDER BY id')).map((row) => row.id)).toEqual(locations.flatMap((l) => l.queues.map((q) => q.id)).sort())
        // And nothing more next time.
        const next = await sync(own, ['--url', own.server.base, '--into', ...into, '--json'], env)
        expect(JSON.parse(next.stdout)).toMatchObject({ tickets: { inserted: 0, updated: 0, deleted: 0 } })
      })
    }, 60_000)

    test('a reconcile stopped before its first window is owed: the next plain run says so and takes it up', async () => {
      const into = await harness.fresh('owed')
      const since = NOW - 199 * DAY
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', new Date(since).toISOString()], env)).status).toBe(0)
      await harness.query(into, `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('stray-owed', 1, 'q_pay', 'loc_a', 'WAITING', '${new Date(NOW - 100 * DAY).toISOString()}')`)
      // The connection is lost at the reconcile's first export: no window of it is committed.
      const client = new Client({
        baseUrl: tenant.server.base,
        token: tenant.token,
        maxAttempts: 1,
        fetch: (url, init) => (String(url).includes('/exports/') ? Promise.reject(new TypeError('connection lost')) : fetch(url, init)),
      })
      const target = await openTarget(parseTarget(into[0]!, into[2], { ...process.env, ...env }))
      try {
        await expect(runSync({ client, target, baseUrl: tenant.server.base, since: null, reconcile: true, now: Date.now() })).rejects.toThrow('connection lost')
      } finally {
        await target.close()
      }
      const [state] = await harness.query(into, `SELECT ${harness.iso('reconcile_from')} AS reconcile_from FROM _sync_state`)
      expect(Date.parse(String(state!.reconcile_from))).toBe(since)

      const plain = await sync(tenant, ['--url', tenant.server.base, '--into', ...into], env)
      expect(plain.status).toBe(0)
      expect(plain.stderr).toContain(', reconciled (the reconcile an earlier run left unfinished, taken up and finished): tickets 0 inserted, 0 updated, 1 deleted;')
      expect(await mirrorTickets(into)).toEqual(tenantTickets(tenant, since))
    }, 60_000)
  })

  describe(`${name}: what sync is told`, () => {
    test('a reconcile that would delete more than --max-delete of the mirror stops before deleting (exit 1), and --max-delete 100% allows it', async () => {
      await withOwnMirror('max-delete', NOW - 30 * DAY, async (own, into) => {
        const before = await mirrorTickets(into)
        // The server's data loses most of its tickets without a trace in its change log (a file put
        // back from elsewhere, as an empty answer would look): only a reconcile sees it.
        const db = openTenant(own.server.dataDir, own.orgId)
        db.exec('DROP TRIGGER ticket_deletions_after_delete')
        db.exec(`DELETE FROM tickets WHERE id NOT IN (SELECT id FROM tickets ORDER BY id LIMIT 10)`)
        db.close()
        const refused = await sync(own, ['--url', own.server.base, '--into', ...into, '--reconcile', '--json'], env)
        expect(refused.status).toBe(1)
        const document = JSON.parse(refused.stdout)
        expect(document.error).toBe('too_many_deletes')
        expect(document.message).toMatch(/^the server's answer would delete at least \d+ of the mirror's \d+ tickets, more than --max-delete 50% allows; nothing of it was deleted\. .*--max-delete 100%/)
        expect(refused.stderr.trim().split('\n')).toHaveLength(1)
        expect(await mirrorTickets(into)).toEqual(before)

        const allowed = await sync(own, ['--url', own.server.base, '--into', ...into, '--reconcile', '--max-delete', '100%', '--json'], env)
        expect(allowed.status).toBe(0)
        expect(await mirrorTickets(into)).toEqual(tenantTickets(own, NOW - 30 * DAY))
      })
    }, 60_000)

    test('an answer listing no locations is refused by a plain run before anything changes (exit 1)', async () => {
      await withOwnMirror('empty-structure', NOW - 10 * DAY, async (own, into) => {
        const db = openTenant(own.server.dataDir, own.orgId)
        db.exec('DELETE FROM queues; DELETE FROM locations')
        db.close()
        const refused = await sync(own, ['--url', own.server.base, '--into', ...into], env)
        expect(refused.status).toBe(1)
        expect(refused.stderr).toStartWith("sync: the server's answer would delete 4 of the mirror's 4 locations, more than --max-delete 50% allows")
        expect(Number((await harness.query(into, 'SELECT count(*) AS n FROM locations'))[0]!.n)).toBe(4)
      })
    }, 60_000)

    for (const [what, tamper, message] of [
      ['an id with a control character', (csv: string) => csv.replace(/\n([^,\n]+),/, '\n"$1\u0000\u001b[2J",'), 'has a control character in its id'],
      ['a row outside the window asked for', (csv: string) => `${csv}outside,1,q_pay,loc_a,WAITING,2001-01-01T00:00:00.000Z,,,,,,\n`, 'outside the window asked for'],
    ] as const) {
      test(`${what} in an export is refused (exit 1): nothing of that window is kept`, async () => {
        const into = await harness.fresh(`refused-${what.length}`)
        const since = NOW - 199 * DAY
        // The second window's export, altered on its way (as a broken proxy or another server might).
        let exports = 0
        const client = new Client({
          baseUrl: tenant.server.base,
          token: tenant.token,
          fetch: async (url, init) => {
            const response = await fetch(url, init)
            if (!String(url).includes('/exports/') || ++exports !== 2) return response
            return new Response(tamper(await response.text()), { status: response.status, headers: response.headers })
          },
        })
        const target = await openTarget(parseTarget(into[0]!, into[2], { ...process.env, ...env }))
        try {
          await expect(runSync({ client, target, baseUrl: tenant.server.base, since, now: Date.now() })).rejects.toThrow(message)
        } finally {
          await target.close()
        }
        const [partial] = await harness.query(into, `SELECT (SELECT count(*) FROM tickets) AS n, (SELECT ${harness.iso('loaded_until')} FROM _sync_state) AS until`)
        expect(Date.parse(String(partial!.until))).toBe(since + 90 * DAY)
        expect(Number(partial!.n)).toBe(tenantTickets(tenant, since, since + 90 * DAY).length)
      }, 60_000)
    }
  })

  describe(`${name}: --reconcile`, () => {
    test('makes the mirror equal to the server: a deleted ticket, a late change, a late insert, a stray row; each counted', async () => {
      const since = NOW - 199 * DAY
      await withOwnMirror('reconcile', since, async (own, into) => {
        // What an hourly sync cannot see: a delete, and changes to tickets created more than 89 days ago.
        const db = openTenant(own.server.dataDir, own.orgId)
        const old = (db.query('SELECT id FROM tickets WHERE created_at >= ? ORDER BY created_at LIMIT 2').all(new Date(since).toISOString()) as { id: string }[]).map((r) => r.id)
        db.query('DELETE FROM tickets WHERE id = ?').run(old[0]!)
        db.query("UPDATE tickets SET status = 'CANCELED', cancelled_at = ? WHERE id = ?").run(new Date().toISOString(), old[1]!)
        writeTickets(db, [{ id: 'late-insert', number: 3, queueId: 'q_pay', locationId: 'loc_a', status: 'COMPLETED', createdAt: new Date(NOW - 120 * DAY).toISOString() }])
        db.close()
        // And a row the server never had, as a writer other than sync might leave.
        await harness.query(
          into,
          `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('stray', 1, 'q_pay', 'loc_a', 'WAITING', '${new Date(NOW - 100 * DAY).toISOString()}')`,
        )
        // A plain run deletes the deleted ticket (the change feed says so), not the others.
        const plain = await sync(own, ['--url', own.server.base, '--into', ...into, '--json'], env)
        expect(JSON.parse(plain.stdout)).toMatchObject({ reconciled: false, tickets: { inserted: 0, updated: 0, deleted: 1 } })
        expect(await mirrorTickets(into)).not.toEqual(tenantTickets(own, since))

        const reconciled = await sync(own, ['--url', own.server.base, '--into', ...into, '--reconcile', '--json'], env)
        expect(reconciled.stderr).toBe('')
        expect(reconciled.status).toBe(0)
        // The token's check, /v1/queues, three windows over the 200 days, then the changes pass
        // and its deletes (a page per window).
        expect(JSON.parse(reconciled.stdout)).toMatchObject({ reconciled: true, windows: 4, requests: 9, tickets: { inserted: 1, updated: 1, deleted: 1 } })
        expect(await mirrorTickets(into)).toEqual(tenantTickets(own, since))
        expect(await duplicates(into)).toBe(0)
        const again = await sync(own, ['--url', own.server.base, '--into', ...into, '--reconcile', '--json'], env)
        expect(JSON.parse(again.stdout)).toMatchObject({ reconciled: true, tickets: { inserted: 0, updated: 0, deleted: 0 } })
      })
    }, 60_000)

    test('a server whose tickets were replaced (a new change history, as admin seed --replace makes) is reconciled whole by a plain run', async () => {
      const since = NOW - 199 * DAY
      await withOwnMirror('replaced', since, async (own, into) => {
        // The file's tickets replaced, old ones included, and a new history: the stored token is refused.
        const db = openTenant(own.server.dataDir, own.orgId)
        const cut = new Date(NOW - 150 * DAY).toISOString()
        const { mirrored } = db.query('SELECT count(*) AS mirrored FROM tickets WHERE created_at >= ? AND created_at < ?').get(new Date(since).toISOString(), cut) as { mirrored: number }
        db.query('DELETE FROM tickets WHERE created_at < ?').run(cut)
        writeTickets(db, [{ id: 'replacement', number: 4, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: new Date(NOW - 160 * DAY).toISOString() }])
        db.exec('UPDATE change_history SET history_id = lower(hex(randomblob(16)))')
        db.close()
        expect(mirrored).toBeGreaterThan(0)

        const run = await sync(own, ['--url', own.server.base, '--into', ...into, '--json'], env)
        expect(run.stderr).toBe('')
        expect(run.status).toBe(0)
        expect(JSON.parse(run.stdout)).toMatchObject({ reconciled: true, tickets: { inserted: 1, deleted: mirrored } })
        expect(await mirrorTickets(into)).toEqual(tenantTickets(own, since))
        expect(await duplicates(into)).toBe(0)
        // And the token it keeps is the new history's: the next run moves nothing.
        const next = await sync(own, ['--url', own.server.base, '--into', ...into, '--json'], env)
        expect(JSON.parse(next.stdout)).toMatchObject({ reconciled: false, tickets: { inserted: 0, updated: 0, deleted: 0 } })
      })
    }, 60_000)

    test('locations and queues the API no longer lists are deleted by every run, and counted', async () => {
      await withOwnMirror('reconcile-structure', NOW - 10 * DAY, async (own, into) => {
        const db = openTenant(own.server.dataDir, own.orgId)
        db.query("DELETE FROM queues WHERE id = 'q_zh'").run()
        db.query("DELETE FROM locations WHERE id = 'loc_empty'").run()
        db.close()
        const structure = async () => ({
          locations: (await harness.query(into, 'SELECT id FROM locations ORDER BY id')).map((row) => row.id),
          queues: (await harness.query(into, 'SELECT id FROM queues ORDER BY id')).map((row) => row.id),
        })
        const plain = await sync(own, ['--url', own.server.base, '--into', ...into, '--json'], env)
        expect(plain.status).toBe(0)
        expect(JSON.parse(plain.stdout)).toMatchObject({ locations: { inserted: 0, updated: 0, deleted: 1 }, queues: { inserted: 0, updated: 0, deleted: 1 } })
        const { locations } = await new Client({ baseUrl: own.server.base, token: own.token }).queues()
        expect(await structure()).toEqual({
          locations: locations.map((l) => l.id).sort(),
          queues: locations.flatMap((l) => l.queues.map((q) => q.id)).sort(),
        })
      })
    }, 60_000)

    test('stopped half-way, it goes on from the window it stopped at; the state says where', async () => {
      const into = await harness.fresh('reconcile-resume')
      const since = NOW - 199 * DAY
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--since', new Date(since).toISOString()], env)).status).toBe(0)
      const db = openTenant(tenant.server.dataDir, tenant.orgId)
      const doomed = (db.query('SELECT id FROM tickets WHERE created_at >= ? ORDER BY created_at LIMIT 2').all(new Date(NOW - 10 * DAY).toISOString()) as { id: string }[]).map((r) => r.id)
      for (const id of doomed) db.query('DELETE FROM tickets WHERE id = ?').run(id)
      db.close()

      // The connection is lost at the third export of the reconcile (its last window): the two
      // before it are committed, the third is not.
      const spec = parseTarget(into[0]!, into[2], { ...process.env, ...env })
      let exports = 0
      const client = new Client({
        baseUrl: tenant.server.base,
        token: tenant.token,
        maxAttempts: 1,
        fetch: (url, init) => {
          if (String(url).includes('/exports/') && ++exports === 3) return Promise.reject(new TypeError('connection lost'))
          return fetch(url, init)
        },
      })
      const target = await openTarget(spec)
      try {
        await expect(runSync({ client, target, baseUrl: tenant.server.base, since: null, reconcile: true, now: Date.now() })).rejects.toThrow('connection lost')
      } finally {
        await target.close()
      }
      const [state] = await harness.query(into, `SELECT ${harness.iso('reconcile_from')} AS reconcile_from FROM _sync_state`)
      expect(Date.parse(String(state!.reconcile_from))).toBe(since + 180 * DAY)

      const resumed = await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--reconcile', '--json'], env)
      expect(resumed.status).toBe(0)
      // Only the last window is read again, where both deleted tickets were.
      expect(JSON.parse(resumed.stdout)).toMatchObject({ reconciled: true, windows: 2, tickets: { deleted: 2 } })
      expect(await mirrorTickets(into)).toEqual(tenantTickets(tenant, since))
      const [after] = await harness.query(into, 'SELECT reconcile_from FROM _sync_state')
      expect(after!.reconcile_from).toBeNull()
    }, 60_000)
  })

  describe(`${name}: stopped half-way`, () => {
    test('a download that breaks half-way through a window every time leaves nothing of that window, named as the API\'s; the next run loads it', async () => {
      const into = await harness.fresh('broken')
      const since = NOW - 199 * DAY
      // The second window's export is cut off after its first 64 KB (a dropped connection
      // mid-body), at each of its four tries.
      let exports = 0
      const retries: unknown[] = []
      const client = new Client({
        baseUrl: tenant.server.base,
        token: tenant.token,
        maxAttempts: 1,
        fetch: async (url, init) => {
          const response = await fetch(url, init)
          if (!String(url).includes('/exports/') || ++exports < 2 || exports > 5) return response
          const reader = response.body!.getReader()
          let passed = 0
          const body = new ReadableStream<Uint8Array>({
            async pull(controller) {
              const { done, value } = await reader.read()
              if (done || passed > 64 * 1024) {
                await reader.cancel()
                return controller.error(new TypeError('connection reset mid-body'))
              }
              passed += value.length
              controller.enqueue(value)
            },
          })
          return new Response(body, { status: response.status, headers: response.headers })
        },
      })
      const target = await openTarget(parseTarget(into[0]!, into[2], { ...process.env, ...env }))
      try {
        const run = runSync({ client, target, baseUrl: tenant.server.base, since, now: Date.now(), sleep: async () => {}, onRetry: (event) => retries.push(event) })
        await expect(run).rejects.toThrow('the download broke off: connection reset mid-body')
        await expect(run).rejects.toBeInstanceOf(DownloadBrokeError)
        expect(retries).toHaveLength(3)
        expect(exports).toBe(5)
      } finally {
        await target.close()
      }
      const [partial] = await harness.query(into, `SELECT (SELECT count(*) FROM tickets) AS n, (SELECT ${harness.iso('loaded_until')} FROM _sync_state) AS until`)
      expect(Date.parse(String(partial!.until))).toBe(since + 90 * DAY)
      expect(Number(partial!.n)).toBe(tenantTickets(tenant, since, since + 90 * DAY).length)

      const resumed = await sync(tenant, ['--url', tenant.server.base, '--into', ...into, '--json'], env)
      expect(resumed.status).toBe(0)
      expect(await mirrorTickets(into)).toEqual(tenantTickets(tenant, since))
      expect(await duplicates(into)).toBe(0)
    }, 60_000)

    test('a server connection reset mid-download is retried (the window again), and the run ends equal; reset every time, exit 1 names the API', async () => {
      const port = Number(new URL(tenant.server.base).port)
      const proxy = await startFlakyProxy({ host: '127.0.0.1', port })
      try {
        const into = await harness.fresh('reset')
        const since = new Date(NOW - 150 * DAY).toISOString()
        proxy.cutNext(2)
        const run = await sync(tenant, ['--url', proxy.base, '--into', ...into, '--since', since, '--json'], env)
        expect(run.stderr).toBe('')
        expect(run.status).toBe(0)
        expect(proxy.state.cut).toBe(2)
        expect(JSON.parse(run.stdout)).toMatchObject({ waits: 2, tickets: { deleted: 0 } })
        expect(await mirrorTickets(into)).toEqual(tenantTickets(tenant, Date.parse(since)))
        expect(await duplicates(into)).toBe(0)

        const other = await harness.fresh('reset-always')
        proxy.cutNext(1000)
        const failed = await sync(tenant, ['--url', proxy.base, '--into', ...other, '--since', since], env)
        expect(failed.status).toBe(1)
        expect(failed.stderr).toStartWith(`sync: the API at ${proxy.base}: a window's download broke off 4 times (`)
        expect(failed.stderr).not.toContain('PostgreSQL at')
        expect(failed.stderr.trim().split('\n')).toHaveLength(1)
      } finally {
        await proxy.close()
      }
    }, 60_000)

    test('SIGKILL during the backfill: the next run resumes and ends equal, with no duplicate', async () => {
      // Four requests a minute: /v1/queues and three windows, then the run waits for the minute
      // window. The resumed run's four (the token's check, /v1/queues, the last window, the
      // changes) fit in the next minute.
      const limited = await tenantServer({ rateLimitPerMinute: 4 })
      try {
        const into = await harness.fresh('killed')
        const since = NOW - 280 * DAY
        const child = startSync(limited, ['--url', limited.server.base, '--into', ...into, '--since', new Date(since).toISOString()], env, true)
        await eventually(() => limited.server.logger.lines.some((line) => line.includes('"status":429')), 30_000, 'the run to wait for the minute window')
        child.kill('SIGKILL')
        expect(await child.exited).toBe(137)

        const [partial] = await harness.query(into, `SELECT (SELECT count(*) FROM tickets) AS n, (SELECT ${harness.iso('loaded_until')} FROM _sync_state) AS until`)
        expect(Date.parse(String(partial!.until))).toBe(since + 270 * DAY)
        expect(Number(partial!.n)).toBe(tenantTickets(limited, since, since + 270 * DAY).length)

        // The resumed run (the token's check, /v1/queues, the last window, the changes and their
        // deletes over four windows) waits for the minute window twice: its waits move the server's clock.
        limited.server.clock.advance(61_000)
        const client = new Client({ baseUrl: limited.server.base, token: limited.token, sleep: async (ms) => limited.server.clock.advance(ms + 1000) })
        const target = await openTarget(parseTarget(into[0]!, into[2], { ...process.env, ...env }))
        const summary = await runSync({ client, target, baseUrl: limited.server.base, since: null, now: Date.now() }).finally(() => target.close())
        const expected = tenantTickets(limited, since)
        // Only what the stopped run had not committed is new.
        expect(summary).toMatchObject({ firstRun: false, tickets: { inserted: expected.length - Number(partial!.n), deleted: 0 } })
        expect(await mirrorTickets(into)).toEqual(expected)
        expect(await duplicates(into)).toBe(0)
      } finally {
        await limited.server.close()
      }
    }, 60_000)
  })
}
