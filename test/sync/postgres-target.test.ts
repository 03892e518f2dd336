import { generateToken } from '../../src/auth/token.ts'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { join } from 'node:path'
import { postgresAvailable, startPostgres, type PostgresServer } from '../support/postgres-server.ts'
import { DAY, startSync, sync, syncTargetSuite, tenantServer, tenantTickets, type Tenant } from '../support/sync-target-suite.ts'
import { openTenant } from '../support/harness.ts'
import { writeTickets } from '../support/fixtures.ts'
import { eventually } from '../support/raw-http.ts'
import { firstChunkThenSilence } from '../support/flaky-proxy.ts'
import { runLockKey } from '../../src/sync/postgres-target.ts'
import { parseSchemaName } from '../../src/sync/postgres-location.ts'
import { Client } from '../../src/client/index.ts'
import { runSync } from '../../src/sync/sync.ts'
import { openTarget, parseTarget } from '../../src/sync/open-target.ts'

/**
 * `sync --into postgresql://…` against a real PostgreSQL cluster made for this file: the shared
 * target suite (each test in a schema of its own), then what only a server database promises:
 * a reader connected during a sync never sees an error nor half a window.
 */

const available = postgresAvailable()
let server: PostgresServer
let databaseUrl: string
const connections = new Map<string, SQL>()

/** A connection of the test's own to the test database (not sync's). */
function reader(): SQL {
  let connection = connections.get('reader')
  if (!connection) {
    connection = new SQL(databaseUrl, { max: 2 })
    connections.set('reader', connection)
  }
  return connection
}

if (available) {
  beforeAll(async () => {
    server = await startPostgres()
    databaseUrl = await server.createDatabase('warehouse')
  }, 60_000) // initdb and the first start take seconds on a loaded machine
  afterAll(async () => {
    for (const connection of connections.values()) await connection.close()
    await server?.stop()
  })
}

const schemaOf = (into: string[]) => into[2]!

describe.skipIf(!available)('PostgreSQL target', () => {
  syncTargetSuite({
    name: 'PostgreSQL',
    // Each test in a schema of its own; sync creates it. A password in the environment, as
    // documented, though the test cluster trusts loopback connections.
    fresh: async (label) => [databaseUrl, '--schema', `t_${label.replace(/-/g, '_')}`],
    env: { PGPASSWORD: 'not-needed-here' },
    query: async (into, sql) => {
      const rows = (await reader().begin(async (tx) => {
        await tx.unsafe(`SET LOCAL search_path TO "${schemaOf(into)}"`)
        return tx.unsafe(sql)
      })) as Record<string, unknown>[]
      // count(*) comes back as a bigint string; the suite compares numbers.
      return rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'bigint' ? Number(value) : value])))
    },
    iso: (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
    ticketTypes: async (into) =>
      Object.fromEntries(
        ((await reader().unsafe(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'tickets'`, [schemaOf(into)])) as {
          column_name: string
          data_type: string
        }[]).map((c) => [c.column_name, c.data_type]),
      ),
    comments: async (into) => {
      const rows = (await reader().unsafe(
        `SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS comment FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind IN ('r', 'v')
         UNION ALL
         SELECT c.relname || '.' || a.attname, col_description(c.oid, a.attnum) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'v') AND a.attnum > 0 AND NOT a.attisdropped`,
        [schemaOf(into)],
      )) as { name: string; comment: string | null }[]
      return Object.fromEntries(rows.map((row) => [row.name, row.comment]))
    },
    expectedTicketTypes: {
      id: 'text', number: 'integer', queue_id: 'text', location_id: 'text', status: 'text',
      created_at: 'timestamp with time zone', called_at: 'timestamp with time zone', completed_at: 'timestamp with time zone',
      cancelled_at: 'timestamp with time zone', skipped_at: 'timestamp with time zone', no_show_at: 'timestamp with time zone',
      called_by_device_session_id: 'text', _synced_at: 'timestamp with time zone',
    },
  })

  describe('PostgreSQL: the schema', () => {
    test('tickets.id is the primary key', async () => {
      const tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
      try {
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'keyed', '--since', new Date(Date.now() - 5 * DAY).toISOString()])
        expect(run.status).toBe(0)
        const keys = (await reader().unsafe(
          `SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc
             JOIN information_schema.key_column_usage kcu USING (constraint_schema, constraint_name)
            WHERE tc.constraint_schema = 'keyed' AND tc.constraint_type = 'PRIMARY KEY' ORDER BY 1`,
        )) as { table_name: string; column_name: string }[]
        expect(keys.map((k) => `${k.table_name}.${k.column_name}`)).toEqual(['_sync_state.id', 'locations.id', 'queues.id', 'tickets.id'])
      } finally {
        await tenant.server.close()
      }
    })
  })

  describe('PostgreSQL: a mirror for BI tools', () => {
    let tenant: Tenant
    beforeAll(async () => {
      tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
    })
    afterAll(() => tenant.server.close())
    const since = () => new Date(Date.now() - 5 * DAY).toISOString()
    /** Mirrors into `schema` through `base` (exit 0), then writes `pg-<schema>-new` on the writer: a ticket the next run has to bring. */
    const mirrorThenWriteOne = async (schema: string, base = tenant.server.base) => {
      expect((await sync(tenant, ['--url', base, '--into', databaseUrl, '--schema', schema, '--since', since()])).status).toBe(0)
      const writer = openTenant(tenant.server.dataDir, tenant.orgId)
      writeTickets(writer, [{ id: `pg-${schema}-new`, number: 1, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: new Date(Date.now() - 500).toISOString() }])
      writer.close()
    }

    test('indexes for time ranges and per queue or location; last_run is a JSON object', async () => {
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'indexed', '--since', since()])).status).toBe(0)
      const indexes = server.psql('warehouse', "SELECT string_agg(indexdef, E'\\n' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'indexed' AND tablename = 'tickets'")
      expect(indexes).toContain('ON indexed.tickets USING btree (created_at)')
      expect(indexes).toContain('ON indexed.tickets USING btree (queue_id, created_at)')
      expect(indexes).toContain('ON indexed.tickets USING btree (location_id, created_at)')
      expect(server.psql('warehouse', 'SELECT jsonb_typeof(last_run) FROM indexed._sync_state')).toBe('object')
      // A BI reader inside a long transaction (REPEATABLE READ, as a dashboard's export holds
      // it) does not hold a later run up: the mirror's shape is current, so no DDL is run.
      const pool = new SQL(databaseUrl, { max: 1 })
      const bi = await pool.reserve()
      try {
        await bi.unsafe('BEGIN ISOLATION LEVEL REPEATABLE READ')
        await bi.unsafe('SELECT count(*) FROM indexed.ticket_details')
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'indexed', '--timeout', '2'])
        expect(run.stderr).toStartWith('mirror current')
        expect(run.status).toBe(0)
        await bi.unsafe('COMMIT')
      } finally {
        bi.release()
        await pool.close()
      }
    })

    test('a mirror made by the previous release (no _synced_at, last_run a JSON string) is brought up to date', async () => {
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'previous', '--since', since()])).status).toBe(0)
      server.psql('warehouse', `DROP VIEW previous.ticket_details; ALTER TABLE previous.tickets DROP COLUMN _synced_at;
        UPDATE previous._sync_state SET last_run = to_jsonb(last_run::text)`)
      const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'previous', '--json'])
      expect(run.status).toBe(0)
      expect(server.psql('warehouse', 'SELECT jsonb_typeof(last_run) FROM previous._sync_state')).toBe('object')
      expect(server.psql('warehouse', 'SELECT count(*) = count(_synced_at) FROM previous.ticket_details')).toBe('t')
    })

    test('a view of the previous release (waits as numeric(*,6) from EXTRACT) is made again with numeric(18,3) waits', async () => {
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'old_waits', '--since', since()])).status).toBe(0)
      server.psql('warehouse', `DO $$ DECLARE
          definition text := replace(pg_get_viewdef('old_waits.ticket_details'), '::numeric(18,3)', '');
          remark text := obj_description('old_waits.ticket_details'::regclass, 'pg_class');
        BEGIN
          DROP VIEW old_waits.ticket_details;
          EXECUTE 'CREATE VIEW old_waits.ticket_details AS ' || definition;
          EXECUTE format('COMMENT ON VIEW old_waits.ticket_details IS %L', remark);
        END $$`)
      const type = "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'old_waits.ticket_details'::regclass AND attname = 'wait_seconds'"
      expect(server.psql('warehouse', type)).toBe('numeric')
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'old_waits'])).status).toBe(0)
      expect(server.psql('warehouse', type)).toBe('numeric(18,3)')
    })

    test("a mirror of the release before locations' time zones (its view, its comment) gains time_zone and the local columns in place", async () => {
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'before_zones', '--since', since()])).status).toBe(0)
      const previousComment = 'Each ticket with its location_name and queue_name, wait_seconds (called_at - created_at) and service_seconds (completed_at - called_at); NULL where a time is missing.'
      server.psql('warehouse', `DROP VIEW before_zones.ticket_details; ALTER TABLE before_zones.locations DROP COLUMN time_zone;
        CREATE VIEW before_zones.ticket_details AS SELECT t.*, l.name AS location_name, q.name AS queue_name,
          EXTRACT(EPOCH FROM (t.called_at - t.created_at))::numeric(18, 3) AS wait_seconds, EXTRACT(EPOCH FROM (t.completed_at - t.called_at))::numeric(18, 3) AS service_seconds
          FROM before_zones.tickets t LEFT JOIN before_zones.locations l ON l.id = t.location_id LEFT JOIN before_zones.queues q ON q.id = t.queue_id;
        COMMENT ON VIEW before_zones.ticket_details IS '${previousComment}';
        COMMENT ON COLUMN before_zones.ticket_details.wait_seconds IS 'Seconds from created_at to called_at.'`)
      const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'before_zones'])
      expect(run.stderr).toStartWith('mirror current')
      expect(run.status).toBe(0)
      expect(server.psql('warehouse', "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'before_zones' AND column_name IN ('time_zone', 'location_time_zone', 'created_local', 'created_local_day')")).toBe('4')
      expect(server.psql('warehouse', "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'before_zones.ticket_details'::regclass AND attname = 'created_local'")).toBe('timestamp without time zone')
    })

    test('a run that exits on bad input, or fails before its first window, leaves no schema behind', async () => {
      const schemaExists = (name: string) => server.psql('warehouse', `SELECT count(*) FROM pg_namespace WHERE nspname = '${name}'`)
      const badRole = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'fresh1', '--grant', 'nosuchrole'])
      expect(badRole.status).toBe(2)
      expect(badRole.stderr).toContain('--grant nosuchrole: there is no such role')
      expect(schemaExists('fresh1')).toBe('0')
      const refused = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'fresh2'], { API_TOKEN: generateToken() }) // well-formed, unknown to the server
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain('refused the token')
      expect(schemaExists('fresh2')).toBe('0')
      // A stalled first window: the schema this run created goes with it.
      const stalled = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async (request) => {
        const url = new URL(request.url)
        const upstream = await fetch(`${tenant.server.base}${url.pathname}${url.search}`, { headers: request.headers })
        if (!url.pathname.endsWith('.csv')) return upstream
        return new Response(firstChunkThenSilence(upstream.body!), { status: upstream.status, headers: { 'content-type': 'text/csv' } })
      } })
      try {
        const run = await sync(tenant, ['--url', `http://127.0.0.1:${stalled.port}`, '--into', databaseUrl, '--schema', 'fresh3', '--since', since(), '--timeout', '2'])
        expect(run.status).toBe(1)
        expect(schemaExists('fresh3')).toBe('0')
      } finally {
        stalled.stop(true)
      }
    })

    test("--schema refuses every reserved key word of this PostgreSQL (pg_get_keywords' R and T) and accepts the others", () => {
      const words = (category: string) => server.psql('warehouse', `SELECT string_agg(word, ' ') FROM pg_get_keywords() WHERE catcode IN (${category})`).split(' ')
      const accepted = (word: string) => {
        try {
          return parseSchemaName(word) === word
        } catch {
          return false
        }
      }
      expect(words("'R', 'T'").filter(accepted)).toEqual([])
      // An upper-case spelling of a refused name is refused for what it is, with no suggestion of it.
      for (const name of ['INFORMATION_SCHEMA', 'PG_MIRROR', 'SELECT']) expect(() => parseSchemaName(name)).toThrow(new RegExp(`^--schema ${name.toLowerCase()}[ :]`))
      expect(words("'U', 'C'").filter((word) => !accepted(word))).toEqual([])
    })

    test('upgrading it while a reader holds a REPEATABLE READ transaction: other readers wait about a second at most; exit 1 naming the reader', async () => {
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'upgrading', '--since', since()])).status).toBe(0)
      server.psql('warehouse', 'DROP VIEW upgrading.ticket_details; ALTER TABLE upgrading.tickets DROP COLUMN _synced_at')
      const pool = new SQL(databaseUrl, { max: 2 })
      const bi = await pool.reserve()
      const other = await pool.reserve()
      try {
        await bi.unsafe('BEGIN ISOLATION LEVEL REPEATABLE READ')
        await bi.unsafe('SELECT count(*) FROM upgrading.tickets')
        const [{ pid }] = (await bi.unsafe('SELECT pg_backend_pid() AS pid')) as [{ pid: number }]
        let ended = false
        const running = sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'upgrading', '--timeout', '6']).finally(() => (ended = true))
        // Another reader, querying all along: each query may queue behind the upgrade's ALTER TABLE.
        const waits: number[] = []
        while (!ended) {
          const started = performance.now()
          await other.unsafe('SELECT count(*) FROM upgrading.tickets')
          waits.push(performance.now() - started)
          await Bun.sleep(50)
        }
        const run = await running
        expect(run.status).toBe(1)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain(`backend ${pid}`)
        expect(Math.max(...waits)).toBeLessThan(2000)
        await bi.unsafe('COMMIT')
        expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'upgrading'])).status).toBe(0)
        expect(server.psql('warehouse', 'SELECT count(*) = count(_synced_at) FROM upgrading.ticket_details')).toBe('t')
      } finally {
        bi.release()
        other.release()
        await pool.close()
      }
    })

    test('--grant ROLE: the role reads the schema, tables made later included, before and after a reconcile; an unknown role is exit 2', async () => {
      server.psql('postgres', 'CREATE ROLE bi_reader LOGIN')
      const asReader = new SQL(databaseUrl.replace('postgres@', 'bi_reader@'), { max: 1 })
      try {
        expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'granted', '--since', since(), '--grant', 'bi_reader'])).status).toBe(0)
        const read = async () => (await asReader.unsafe('SELECT count(*)::int AS n FROM granted.ticket_details WHERE queue_name IS NOT NULL')) as { n: number }[]
        expect((await read())[0]!.n).toBeGreaterThan(0)
        // A view dropped and made again by a later run (without --grant) is readable too: default privileges.
        server.psql('warehouse', 'DROP VIEW granted.ticket_details')
        expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'granted', '--reconcile'])).status).toBe(0)
        expect((await read())[0]!.n).toBeGreaterThan(0)
        await expect(asReader.unsafe('DELETE FROM granted.tickets')).rejects.toThrow('permission denied')
      } finally {
        await asReader.close()
      }
      const unknown = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'granted', '--grant', 'nobody_here'])
      expect(unknown.status).toBe(2)
      expect(unknown.stderr).toContain('--grant nobody_here: there is no such role')
    })

    test('an API that stalls in the middle of an export: exit 1 after --timeout, the COPY rolled back, the run lock released', async () => {
      // A front for the server that, once told to, sends an export's headers and first chunk and
      // then nothing more, as a stopped server process does.
      let stall = false
      const front = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        async fetch(request) {
          const url = new URL(request.url)
          const upstream = await fetch(`${tenant.server.base}${url.pathname}${url.search}`, { headers: request.headers })
          const headers = new Headers(upstream.headers)
          headers.delete('content-encoding')
          headers.delete('content-length')
          if (!stall || !url.pathname.endsWith('.csv')) return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers })
          const body = firstChunkThenSilence(upstream.body!)
          return new Response(body, { status: upstream.status, headers })
        },
      })
      const base = `http://127.0.0.1:${front.port}`
      try {
        await mirrorThenWriteOne('stalled', base)
        stall = true
        const started = Date.now()
        const run = await sync(tenant, ['--url', base, '--into', databaseUrl, '--schema', 'stalled', '--timeout', '2'])
        expect(run.status).toBe(1)
        expect(Date.now() - started).toBeLessThan(20_000)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain(`no byte from ${base} for 2 s (--timeout)`)
        expect(run.stderr).toContain('every window committed so far is kept, run sync again to go on')
        expect(server.psql('warehouse', "SELECT count(*) FROM stalled.tickets WHERE id = 'pg-stalled-new'")).toBe('0')
        stall = false
        const after = await sync(tenant, ['--url', base, '--into', databaseUrl, '--schema', 'stalled', '--timeout', '2'])
        expect(after.status).toBe(0)
        expect(server.psql('warehouse', "SELECT count(*) FROM stalled.tickets WHERE id = 'pg-stalled-new'")).toBe('1')
      } finally {
        front.stop(true)
      }
    }, 60_000)

    test('a lock held by another session past --timeout: exit 1 naming its backend, nothing of the window kept, the run lock released', async () => {
      await mirrorThenWriteOne('locked')
      const pool = new SQL(databaseUrl, { max: 1 })
      const holder = await pool.reserve()
      try {
        const [{ pid }] = (await holder.unsafe('SELECT pg_backend_pid() AS pid')) as [{ pid: number }]
        await holder.unsafe('BEGIN')
        await holder.unsafe('LOCK TABLE locked.tickets IN SHARE MODE')
        const started = Date.now()
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'locked', '--timeout', '1', '--json'])
        expect(run.status).toBe(1)
        expect(Date.now() - started).toBeLessThan(15_000)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain(`held for longer than --timeout (1 s) by PostgreSQL backend ${pid}`)
        expect(JSON.parse(run.stdout)).toMatchObject({ error: 'timeout' })
        await holder.unsafe('ROLLBACK')
      } finally {
        holder.release()
        await pool.close()
      }
      expect(server.psql('warehouse', "SELECT count(*) FROM locked.tickets WHERE id = 'pg-locked-new'")).toBe('0')
      const after = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'locked', '--json'])
      expect(after.status).toBe(0)
      expect(server.psql('warehouse', "SELECT count(*) FROM locked.tickets WHERE id = 'pg-locked-new'")).toBe('1')
    }, 60_000)

    test('a reader holding tickets and an ALTER queued behind it: the lock message names the queued backend first, with its role, and the reader it waits for', async () => {
      await mirrorThenWriteOne('queued')
      const readerPool = new SQL(databaseUrl, { max: 1 })
      const alterPool = new SQL(databaseUrl, { max: 1 })
      const reader = await readerPool.reserve()
      const alter = await alterPool.reserve()
      try {
        const [{ pid: readerPid }] = (await reader.unsafe('SELECT pg_backend_pid() AS pid')) as [{ pid: number }]
        const [{ pid: alterPid }] = (await alter.unsafe('SELECT pg_backend_pid() AS pid')) as [{ pid: number }]
        await reader.unsafe('BEGIN')
        await reader.unsafe('SELECT count(*) FROM queued.tickets')
        const queuedAlter = alter.unsafe('ALTER TABLE queued.tickets ADD COLUMN note TEXT').catch(() => undefined)
        await eventually(() => Number(server.psql('warehouse', `SELECT count(*) FROM pg_locks WHERE pid = ${alterPid} AND NOT granted`)) > 0, 10_000, 'the ALTER to queue')
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 'queued', '--timeout', '1'])
        expect(run.status).toBe(1)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain(`held for longer than --timeout (1 s) by PostgreSQL backend ${alterPid} (role postgres) queued for AccessExclusiveLock on tickets behind backend ${readerPid}`)
        expect(run.stderr).toContain(`; backend ${readerPid} (role postgres) holds AccessShareLock on tickets`)
        await reader.unsafe('ROLLBACK')
        await queuedAlter
        await alter.unsafe('ALTER TABLE queued.tickets DROP COLUMN note')
      } finally {
        reader.release()
        alter.release()
        await readerPool.close()
        await alterPool.close()
      }
    }, 60_000)

    test.each(['ACCESS EXCLUSIVE', 'EXCLUSIVE'])('a lock on _sync_state (%s) past --timeout: exit 1 naming its backend too', async (mode) => {
      const schema = `state_locked_${mode === 'EXCLUSIVE' ? 'x' : 'ax'}`
      expect((await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', schema, '--since', since()])).status).toBe(0)
      const pool = new SQL(databaseUrl, { max: 1 })
      const holder = await pool.reserve()
      try {
        const [{ pid }] = (await holder.unsafe('SELECT pg_backend_pid() AS pid')) as [{ pid: number }]
        await holder.unsafe('BEGIN')
        await holder.unsafe(`LOCK TABLE ${schema}._sync_state IN ${mode} MODE`)
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', schema, '--timeout', '1'])
        expect(run.status).toBe(1)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain(`held for longer than --timeout (1 s) by PostgreSQL backend ${pid}`)
        await holder.unsafe('ROLLBACK')
      } finally {
        holder.release()
        await pool.close()
      }
    }, 60_000)
  })

  describe('PostgreSQL: docs/loading.md followed', () => {
    test('its read-only user, its sync command with --grant, and that user\'s first query', async () => {
      const docs = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'loading.md')).text()
      const command = /\n(npm run -s sync -- --url http:\/\/127\.0\.0\.1:3000 --into postgresql:\/\/\S+ --grant bi)\n/.exec(docs)![1]!
      const [documentedUrl] = /postgresql:\/\/\S+/.exec(command)!
      const blocks = [...docs.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!)
      const role = blocks.find((block) => block.startsWith('CREATE ROLE bi'))
      const query = blocks.find((block) => block.includes('median_wait_minutes'))
      const tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
      try {
        // The documented database, on this test's cluster: the same user and database names.
        const { pathname, username } = new URL(documentedUrl)
        server.psql('postgres', `CREATE ROLE ${username} LOGIN`)
        server.psql('postgres', `CREATE DATABASE ${pathname.slice(1)} OWNER ${username}`)
        server.psql('postgres', role!)
        const url = documentedUrl.replace(/@[^/]+\//, `@127.0.0.1:${server.port}/`)
        // Asynchronously: the server answering it runs in this process.
        const run = Bun.spawn(['bash', '-c', command.replace('http://127.0.0.1:3000', tenant.server.base).replace(documentedUrl, url)], {
          env: { ...process.env, API_TOKEN: tenant.token, PGPASSWORD: 'unused-by-trust' },
          stdout: 'pipe',
          stderr: 'pipe',
        })
        expect(await new Response(run.stderr).text()).toStartWith('mirror current up to')
        expect(await run.exited).toBe(0)

        const bi = new SQL(url.replace(`${username}@`, 'bi:change-me@'), { max: 1 })
        try {
          const rows = (await bi.unsafe(query!)) as { location: string; queue: string; day: unknown; median_wait_minutes: string }[]
          expect(rows.length).toBeGreaterThan(0)
          expect(rows.find((row) => row.queue === 'Payments')).toMatchObject({ location: expect.any(String), median_wait_minutes: '0.5' })
          // Its days are UTC's whatever the session's time zone.
          const elsewhere = await bi.begin(async (tx) => {
            await tx.unsafe("SET LOCAL TIME ZONE 'Pacific/Auckland'")
            return tx.unsafe(query!)
          })
          expect([...elsewhere]).toEqual([...rows])
          // Read-only: the BI user cannot write the mirror.
          await expect(bi.unsafe(`DELETE FROM tickets`)).rejects.toThrow('permission denied')
        } finally {
          await bi.close()
        }
      } finally {
        await tenant.server.close()
      }
    }, 30_000)
  })

  describe('PostgreSQL: a reader during a sync', () => {
    test('a second connection querying all along never sees an error nor half a window', async () => {
      // Four requests a minute: the run loads three windows, then waits for the minute window,
      // where the reader sees them committed; then it is stopped and run again.
      const limited = await tenantServer({ rateLimitPerMinute: 4 })
      const schema = 'during'
      const since = Date.now() - 280 * DAY
      const seen: { rows: number; loadedUntil: number | null }[] = []
      const errors: unknown[] = []
      let polling = true
      const connection = new SQL(databaseUrl, { max: 1 })
      // What a dashboard asks, over and over, in its own connection, while sync writes.
      const poll = (async () => {
        while (polling) {
          try {
            const [row] = (await connection.unsafe(
              `SELECT (SELECT count(*) FROM ${schema}.tickets)::int AS rows,
                      (SELECT (extract(epoch FROM loaded_until) * 1000)::float8 FROM ${schema}._sync_state) AS loaded_until,
                      (SELECT count(*) FROM ${schema}.tickets t JOIN ${schema}.queues q ON q.id = t.queue_id)::int AS joined`,
            )) as { rows: number; loaded_until: number | null; joined: number }[]
            seen.push({ rows: row!.rows, loadedUntil: row!.loaded_until === null ? null : Math.round(row!.loaded_until) })
          } catch (error) {
            // Before sync has created the schema, the tables do not exist yet: that is no error of a sync.
            if (!/does not exist/.test(String(error))) errors.push(error)
            else await Bun.sleep(1)
          }
        }
      })()
      try {
        const child = startSync(limited, ['--url', limited.server.base, '--into', databaseUrl, '--schema', schema, '--since', new Date(since).toISOString()], {}, true)
        await eventually(() => limited.server.logger.lines.some((line) => line.includes('"status":429')), 30_000, 'the run to wait for the minute window')
        const midway = seen.length
        await eventually(() => seen.length > midway, 10_000, 'the reader to query while the run waits')
        child.kill('SIGINT')
        expect(await child.exited).toBe(130)
        // The resumed run (the token's check, /v1/queues, the last window, the changes and their
        // deletes over four windows) waits for the minute window twice: its waits move the server's clock.
        limited.server.clock.advance(61_000)
        const client = new Client({ baseUrl: limited.server.base, token: limited.token, sleep: async (ms) => limited.server.clock.advance(ms + 1000) })
        const target = await openTarget(parseTarget(databaseUrl, schema, process.env))
        await runSync({ client, target, baseUrl: limited.server.base, since: null, now: Date.now() }).finally(() => target.close())
        const after = seen.length
        await eventually(() => seen.length > after, 10_000, 'the reader to query after the run')
      } finally {
        polling = false
        await poll
        await connection.close()
      }
      try {
        expect(errors).toEqual([])
        // Every observation is a whole number of windows: the rows are exactly the tenant's tickets
        // created before the state's loaded_until (nothing before the first window's commit).
        const expected = new Map<number, number>()
        const countBefore = (until: number) => expected.get(until) ?? expected.set(until, tenantTickets(limited, since, until).length).get(until)!
        const states = new Set<string>()
        for (const observation of seen) {
          if (observation.loadedUntil === null) expect(observation.rows).toBe(0)
          else expect(observation.rows).toBe(countBefore(observation.loadedUntil))
          states.add(String(observation.loadedUntil))
        }
        // The reader saw the run part-way (three windows) and at its end.
        expect(states.has(String(since + 270 * DAY))).toBe(true)
      } finally {
        await limited.server.close()
      }
    }, 90_000)
  })

  describe('PostgreSQL: one run at a time into a schema', () => {
    test('a run while another holds the schema ends with exit 1, changes nothing, and names the holder; afterwards a run goes through', async () => {
      const tenant: Tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
      // The test's own connection stands for a run still writing: it holds the schema's lock.
      const pool = new SQL(databaseUrl, { max: 1 })
      const holder = await pool.reserve()
      try {
        const [{ pid }] = (await holder.unsafe('SELECT pg_backend_pid() AS pid')) as [{ pid: number }]
        await holder.unsafe('SELECT pg_advisory_lock(hashtextextended($1, 0))', [runLockKey('t_busy')])
        const refused = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 't_busy'])
        expect(refused.status).toBe(1)
        expect(refused.stderr.trim().split('\n')).toHaveLength(1)
        expect(refused.stderr).toContain(`another sync is writing into schema t_busy (PostgreSQL backend ${pid}, connected since `)
        expect(refused.stderr).not.toContain('every window committed')
        expect(server.psql('warehouse', "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 't_busy'")).toBe('0')
        // Another schema's lock is another lock.
        const elsewhere = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 't_not_busy'])
        expect(elsewhere.status).toBe(0)
        await holder.unsafe('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [runLockKey('t_busy')])
        const after = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 't_busy', '--json'])
        expect(after.status).toBe(0)
        expect(JSON.parse(after.stdout).tickets.inserted).toBeGreaterThan(0)
      } finally {
        holder.release()
        await pool.close()
        await tenant.server.close()
      }
    }, 60_000)

    test('a run that finds the lock held by one just ending waits for it, then goes through; runs back to back never refuse each other', async () => {
      const tenant: Tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
      const pool = new SQL(databaseUrl, { max: 1 })
      const holder = await pool.reserve()
      try {
        await holder.unsafe('SELECT pg_advisory_lock(hashtextextended($1, 0))', [runLockKey('t_handover')])
        const waiting = sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 't_handover'])
        await Bun.sleep(1000)
        await holder.unsafe('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [runLockKey('t_handover')])
        const run = await waiting
        expect(run.stderr).toContain('mirror current')
        expect(run.status).toBe(0)
        for (const extra of [[], ['--reconcile'], [], ['--reconcile']]) {
          const next = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl, '--schema', 't_handover', ...extra])
          expect(next.stderr).toContain('mirror current')
        }
      } finally {
        holder.release()
        await pool.close()
        await tenant.server.close()
      }
    }, 60_000)
  })

  describe('PostgreSQL: wrong input and failures', () => {
    test('no PostgreSQL at the URL: exit 1 with one line naming it, never the password', async () => {
      const tenant: Tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
      try {
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', 'postgresql://loader:pa55word@127.0.0.1:9/warehouse'])
        expect(run.status).toBe(1)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain('PostgreSQL at postgresql://loader@127.0.0.1:9/warehouse (schema public)')
        expect(run.stderr + run.stdout).not.toContain('pa55word')
        const fromEnv = await sync(tenant, ['--url', tenant.server.base, '--into', 'postgresql://loader@127.0.0.1:9/warehouse'], { PGPASSWORD: 'pa55word' })
        expect(fromEnv.status).toBe(1)
        expect(fromEnv.stderr + fromEnv.stdout).not.toContain('pa55word')
      } finally {
        await tenant.server.close()
      }
    }, 60_000)

    test('a database that does not exist: exit 1 with the server\'s reason', async () => {
      const tenant: Tenant = await tenantServer({ rateLimitPerMinute: 100_000 })
      try {
        const run = await sync(tenant, ['--url', tenant.server.base, '--into', databaseUrl.replace(/\/warehouse$/, '/nowhere')])
        expect(run.status).toBe(1)
        expect(run.stderr.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).toContain('"nowhere" does not exist')
      } finally {
        await tenant.server.close()
      }
    })
  })
})
