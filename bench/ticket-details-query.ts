import { DuckDBInstance } from '@duckdb/node-api'
import { SQL } from 'bun'

/**
 * The median wait per queue, the query every dashboard of the mirror starts with, timed on a
 * mirror `sync` made: through the view `ticket_details`, and written over the tables as a BI user
 * had to before the view (the baseline: what the view costs, if anything).
 */

const THROUGH_THE_VIEW = {
  duckdb: `SELECT queue_id, location_name, queue_name, median(wait_seconds) AS median_wait
             FROM ticket_details WHERE wait_seconds IS NOT NULL GROUP BY ALL`,
  postgresql: `SELECT queue_id, location_name, queue_name, percentile_cont(0.5) WITHIN GROUP (ORDER BY wait_seconds) AS median_wait
                 FROM ticket_details WHERE wait_seconds IS NOT NULL GROUP BY queue_id, location_name, queue_name`,
}

const OVER_THE_TABLES = {
  duckdb: `SELECT t.queue_id, l.name, q.name, median(epoch(t.called_at) - epoch(t.created_at)) AS median_wait
             FROM tickets t JOIN queues q ON q.id = t.queue_id JOIN locations l ON l.id = t.location_id
            WHERE t.called_at IS NOT NULL GROUP BY ALL`,
  postgresql: `SELECT t.queue_id, l.name, q.name, percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM t.called_at - t.created_at)) AS median_wait
                 FROM tickets t JOIN queues q ON q.id = t.queue_id JOIN locations l ON l.id = t.location_id
                WHERE t.called_at IS NOT NULL GROUP BY t.queue_id, l.name, q.name`,
}

export interface QueryTimes {
  view: number[]
  tables: number[]
}

/** Seconds of each of `runs` runs of both forms, alternating, after one warm-up of each. */
async function alternate(runs: number, run: (sql: string) => Promise<unknown>, forms: { view: string; tables: string }): Promise<QueryTimes> {
  const times: QueryTimes = { view: [], tables: [] }
  await run(forms.view)
  await run(forms.tables)
  for (let i = 0; i < runs; i++) {
    for (const form of ['view', 'tables'] as const) {
      const started = performance.now()
      await run(forms[form])
      times[form].push((performance.now() - started) / 1000)
    }
  }
  return times
}

export async function timeDuckDbMedianWait(file: string, runs: number): Promise<QueryTimes> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' })
  const connection = await instance.connect()
  try {
    return await alternate(runs, (sql) => connection.runAndReadAll(sql), { view: THROUGH_THE_VIEW.duckdb, tables: OVER_THE_TABLES.duckdb })
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

export async function timePostgresMedianWait(url: string, schema: string, runs: number): Promise<QueryTimes> {
  const sql = new SQL(url, { max: 1 })
  try {
    const reserved = await sql.reserve()
    await reserved.unsafe(`SET search_path TO "${schema}"`)
    try {
      return await alternate(runs, (text) => reserved.unsafe(text), { view: THROUGH_THE_VIEW.postgresql, tables: OVER_THE_TABLES.postgresql })
    } finally {
      reserved.release()
    }
  } finally {
    await sql.close()
  }
}
