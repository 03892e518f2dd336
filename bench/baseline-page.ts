import type { Database } from 'bun:sqlite'

/**
 * The framework-free baseline's page handler: the same keyset page query as GET /v1/tickets (no
 * filter), without auth, limits or validation. Used by the standalone baseline server and, for
 * the process diagnostic, inside the service's own process (bench/service-with-baseline-route.ts).
 * `?from&to&limit&cursor`, the cursor being base64url(JSON [createdAt, id]).
 */
export const BASELINE_COLUMNS = `id, number, queue_id AS queueId, location_id AS locationId, status, created_at AS createdAt, called_at AS calledAt,
  completed_at AS completedAt, cancelled_at AS cancelledAt, skipped_at AS skippedAt, no_show_at AS noShowAt,
  called_by_device_session_id AS calledByDeviceSessionId`

export function baselinePageHandler(db: Database): (params: URLSearchParams) => Response {
  const first = db.prepare(`SELECT ${BASELINE_COLUMNS} FROM tickets WHERE created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT ?`)
  const after = db.prepare(`SELECT ${BASELINE_COLUMNS} FROM tickets WHERE (created_at, id) > (?, ?) AND created_at < ? ORDER BY created_at, id LIMIT ?`)
  return (params) => {
    const from = new Date(params.get('from')!).toISOString()
    const to = new Date(params.get('to')!).toISOString()
    const limit = Number(params.get('limit') ?? 100)
    const cursor = params.get('cursor')
    const rows = (cursor
      ? after.all(...(JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, string]), to, limit + 1)
      : first.all(from, to, limit + 1)) as { createdAt: string; id: string }[]
    const more = rows.length > limit
    if (more) rows.length = limit
    const last = rows[rows.length - 1]
    const nextCursor = more && last ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url') : null
    return Response.json({ items: rows, nextCursor })
  }
}
