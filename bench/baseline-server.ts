/**
 * The page benchmark's baseline: a framework-free Bun.serve + bun:sqlite handler running the
 * same keyset query (no filter, 500 rows) on the same tenant file, without auth, limits or
 * validation. `bun bench/baseline-server.ts <tenant file>`; prints its port on stdout.
 */
import { Database } from 'bun:sqlite'

const db = new Database(process.argv[2]!, { readonly: true })
const columns = `id, number, queue_id AS queueId, location_id AS locationId, status, created_at AS createdAt, called_at AS calledAt,
  completed_at AS completedAt, cancelled_at AS cancelledAt, skipped_at AS skippedAt, no_show_at AS noShowAt,
  called_by_device_session_id AS calledByDeviceSessionId`
const first = db.prepare(`SELECT ${columns} FROM tickets WHERE created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT ?`)
const after = db.prepare(`SELECT ${columns} FROM tickets WHERE (created_at, id) > (?, ?) AND created_at < ? ORDER BY created_at, id LIMIT ?`)

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request) {
    const params = new URL(request.url).searchParams
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
  },
})
console.log(server.port)
