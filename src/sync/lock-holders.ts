import type { SQL } from 'bun'

/** Lock modes from the weakest to the strongest, as pg_locks names them. */
const MODES = ['AccessShareLock', 'RowShareLock', 'RowExclusiveLock', 'ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock']

interface LockRow {
  pid: number
  mode: string
  granted: boolean
  role: string | null
  application_name: string | null
  query: string | null
  relname: string
  blocked_by: number[] | null
}

/**
 * Who holds or queues for a lock on a table of `schema`, other than this session, as one
 * phrase per backend, strongest first: a session queued for ACCESS EXCLUSIVE (an ALTER, a
 * VACUUM FULL) blocks every later session behind it, even a reader's, so it is named first,
 * with the backends it waits for (pg_blocking_pids). Each with its role: the query text is
 * `<insufficient privilege>` for another role's session unless the run's role may read it.
 */
export async function lockHolders(sql: SQL, schema: string): Promise<string[]> {
  const rows = (await sql.unsafe(
    `SELECT l.pid, l.mode, l.granted, a.usename AS role, a.application_name,
            left(regexp_replace(a.query, '\\s+', ' ', 'g'), 80) AS query, c.relname,
            CASE WHEN l.granted THEN NULL ELSE pg_blocking_pids(l.pid) END AS blocked_by
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND l.pid <> pg_backend_pid()`,
    [schema],
  )) as LockRow[]
  const strength = (row: LockRow) => MODES.indexOf(row.mode) + (row.granted ? 0 : MODES.length)
  const byBackend = new Map<number, LockRow>()
  for (const row of rows.sort((a, b) => strength(b) - strength(a))) if (!byBackend.has(row.pid)) byBackend.set(row.pid, row)
  return [...byBackend.values()].map((row) => {
    const who = [row.role ? `role ${row.role}` : null, row.application_name || null].filter(Boolean).join(', ')
    const what = row.granted ? `holds ${row.mode} on ${row.relname}` : `queued for ${row.mode} on ${row.relname}${row.blocked_by?.length ? ` behind backend ${row.blocked_by.join(', ')}` : ''}`
    const query = row.query && !row.query.startsWith('<') ? `: ${row.query}` : ''
    return `backend ${row.pid}${who ? ` (${who})` : ''} ${what}${query}`
  })
}
