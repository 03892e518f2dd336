/**
 * What a zone per location costs a query of the mirror: tickets per location and local day
 * through `ticket_details.created_local_day` (each location's own zone, computed by the engine
 * row by row) against the same grouping in one fixed zone. A DuckDB file in the mirror's shape
 * (made by `sync`'s own target) with a 30-location chain in 12 zones, 50,000 tickets a day.
 *   node_modules/.bin/bun bench/local-day-query.ts [days, default 45] [runs, default 5]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { DuckDbTarget } from '../src/sync/duckdb-target.ts'

const days = Number(process.argv[2] ?? 45)
const runs = Number(process.argv[3] ?? 5)
const ZONES = ['America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles', 'Europe/London', 'Europe/Zurich', 'Europe/Moscow',
  'Asia/Kolkata', 'Asia/Tokyo', 'Australia/Sydney', 'America/Sao_Paulo', 'Africa/Johannesburg']

const dir = mkdtempSync(join(tmpdir(), 'bench-local-day-'))
try {
  const file = join(dir, 'mirror.duckdb')
  const target = await DuckDbTarget.open(file)
  await target.prepare()
  await target.close()
  const instance = await DuckDBInstance.create(file)
  const db = await instance.connect()
  const tickets = days * 50_000
  await db.run(`INSERT INTO locations (id, name, slug, time_zone) SELECT 'l' || i, 'L' || i, 'l' || i, ['${ZONES.join("', '")}'][1 + i % 12] FROM range(30) r(i)`)
  await db.run(`INSERT INTO queues (id, location_id, name, slug, status) SELECT 'q' || i, 'l' || (i % 30), 'Q', 'q', 'ACTIVE' FROM range(133) r(i)`)
  await db.run(`INSERT INTO tickets (id, number, queue_id, location_id, status, created_at)
    SELECT 't' || i, i % 1000, 'q' || (i % 133), 'l' || (i % 133 % 30), 'COMPLETED', TIMESTAMPTZ '2026-10-01 00:00:00+00' + to_milliseconds(i * 1728)
      FROM range(${tickets}) r(i)`)
  const median = async (sql: string) => {
    const ms: number[] = []
    for (let i = 0; i < runs; i++) {
      const started = performance.now()
      await db.runAndReadAll(sql)
      ms.push(performance.now() - started)
    }
    return Math.round(ms.sort((a, b) => a - b)[Math.floor(runs / 2)]!)
  }
  const local = await median('SELECT location_id, created_local_day, count(*) FROM ticket_details GROUP BY ALL')
  const fixed = await median(`SELECT location_id, timezone('Europe/Zurich', created_at)::DATE AS day, count(*) FROM ticket_details GROUP BY ALL`)
  console.log(`${tickets} tickets, median of ${runs}: each location's own day ${local} ms, one fixed zone ${fixed} ms (${(local / fixed).toFixed(1)}x)`)
  db.closeSync()
  instance.closeSync()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
