import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { queryDuckDb } from '../support/duckdb-query.ts'
import { tempDataDir } from '../support/harness.ts'
import { syncTargetSuite } from '../support/sync-target-suite.ts'

const temp = tempDataDir()
afterAll(() => temp.cleanup())

syncTargetSuite({
  name: 'DuckDB',
  fresh: async (label) => [join(temp.dir, `${label}.duckdb`)],
  query: (into, sql) => queryDuckDb(into[0]!, sql),
  iso: (column) => `strftime(${column} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ')`,
  ticketTypes: async (into) =>
    Object.fromEntries(
      (await queryDuckDb(into[0]!, `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'tickets'`)).map((c) => [c.column_name, c.data_type]),
    ),
  comments: async (into) => {
    const rows = await queryDuckDb(
      into[0]!,
      `SELECT table_name AS name, comment FROM duckdb_tables() UNION ALL SELECT view_name, comment FROM duckdb_views() WHERE NOT internal
       UNION ALL SELECT table_name || '.' || column_name, comment FROM duckdb_columns() WHERE NOT internal`,
    )
    return Object.fromEntries(rows.map((row) => [String(row.name), (row.comment as string | null) ?? null]))
  },
  expectedTicketTypes: {
    id: 'VARCHAR', number: 'INTEGER', queue_id: 'VARCHAR', location_id: 'VARCHAR', status: 'VARCHAR',
    created_at: 'TIMESTAMP WITH TIME ZONE', called_at: 'TIMESTAMP WITH TIME ZONE', completed_at: 'TIMESTAMP WITH TIME ZONE',
    cancelled_at: 'TIMESTAMP WITH TIME ZONE', skipped_at: 'TIMESTAMP WITH TIME ZONE', no_show_at: 'TIMESTAMP WITH TIME ZONE',
    called_by_device_session_id: 'VARCHAR', _synced_at: 'TIMESTAMP WITH TIME ZONE',
  },
})

describe('DuckDB: the file', () => {
  test("a run removes the spool folders of killed runs beside it, never a live run's nor one that names no run", async () => {
    const folder = join(temp.dir, 'spools')
    mkdirSync(folder)
    // A pid above the kernel's pid_max (4,194,304 at most) is no process.
    const dead = join(folder, '.sync-spool-99999999-abc123')
    const live = join(folder, `.sync-spool-${process.ppid}-def456`)
    const unnamed = join(folder, '.sync-spool-ghi789')
    for (const dir of [dead, live, unnamed]) mkdirSync(dir)
    const { DuckDbTarget } = await import('../../src/sync/duckdb-target.ts')
    const target = await DuckDbTarget.open(join(folder, 'mirror.duckdb'))
    expect([existsSync(dead), existsSync(live), existsSync(unnamed)]).toEqual([false, true, true])
    await target.close()
    // Its own spool goes with it.
    expect(readdirSync(folder).filter((name) => name.startsWith('.sync-spool-')).sort()).toEqual([live, unnamed].map((dir) => dir.slice(folder.length + 1)).sort())
  })


  test('tickets has no key (no ART index to hold in memory); the small tables keep theirs', async () => {
    const file = join(temp.dir, 'keys.duckdb')
    const { DuckDbTarget } = await import('../../src/sync/duckdb-target.ts')
    const target = await DuckDbTarget.open(file)
    await target.prepare()
    await target.close()
    const keys = await queryDuckDb(file, `SELECT table_name FROM duckdb_constraints() WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY table_name`)
    expect(keys.map((k) => k.table_name)).toEqual(['_sync_state', 'locations', 'queues'])
    const indexes = await queryDuckDb(file, `SELECT count(*) AS n FROM duckdb_indexes() WHERE table_name = 'tickets'`)
    expect(Number(indexes[0]!.n)).toBe(0)
  })

  test('a file made with a key on tickets (an earlier version) loses the key and keeps its rows', async () => {
    const file = join(temp.dir, 'keyed.duckdb')
    const instance = await DuckDBInstance.create(file)
    const connection = await instance.connect()
    await connection.run(`CREATE TABLE tickets (id VARCHAR PRIMARY KEY, number INTEGER NOT NULL, queue_id VARCHAR NOT NULL, location_id VARCHAR NOT NULL,
      status VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL, called_at TIMESTAMPTZ, completed_at TIMESTAMPTZ, cancelled_at TIMESTAMPTZ,
      skipped_at TIMESTAMPTZ, no_show_at TIMESTAMPTZ, called_by_device_session_id VARCHAR)`)
    await connection.run(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at) VALUES ('t-1', 1, 'q', 'l', 'WAITING', '2026-03-01T00:00:00Z')`)
    connection.closeSync()
    instance.closeSync()
    const { DuckDbTarget } = await import('../../src/sync/duckdb-target.ts')
    const target = await DuckDbTarget.open(file)
    await target.prepare()
    await target.close()
    expect(await queryDuckDb(file, `SELECT count(*) AS n FROM duckdb_constraints() WHERE table_name = 'tickets' AND constraint_type = 'PRIMARY KEY'`)).toEqual([{ n: '0' }])
    expect(await queryDuckDb(file, 'SELECT id, status FROM tickets')).toEqual([{ id: 't-1', status: 'WAITING' }])
  })
})
