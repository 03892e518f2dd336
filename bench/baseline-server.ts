/**
 * The benchmark's framework-free baseline: Bun.serve + bun:sqlite on the same tenant file,
 * without auth, limits or validation.
 * - `/?from&to&limit&cursor`: the same keyset page query as GET /v1/tickets (no filter).
 * - `/export?from&to&yield=1|0`: the same export query, the service's CSV formatter, written to
 *   a Bun direct stream that waits on the socket's backpressure, yielding one macrotask per
 *   ~64 KB chunk (`yield=1`, the service's mechanism) or never (`yield=0`).
 * `bun bench/baseline-server.ts <tenant file>`; prints its port on stdout.
 */
import { Database } from 'bun:sqlite'
import { csvHeader, csvLine } from '../src/export/csv-format.ts'
import type { TicketRow } from '../src/tickets/repository.ts'

const db = new Database(process.argv[2]!, { readonly: true })
const columns = `id, number, queue_id AS queueId, location_id AS locationId, status, created_at AS createdAt, called_at AS calledAt,
  completed_at AS completedAt, cancelled_at AS cancelledAt, skipped_at AS skippedAt, no_show_at AS noShowAt,
  called_by_device_session_id AS calledByDeviceSessionId`
const first = db.prepare(`SELECT ${columns} FROM tickets WHERE created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT ?`)
const after = db.prepare(`SELECT ${columns} FROM tickets WHERE (created_at, id) > (?, ?) AND created_at < ? ORDER BY created_at, id LIMIT ?`)

function page(params: URLSearchParams): Response {
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

function csvExport(params: URLSearchParams): Response {
  const statement = db.prepare(`SELECT ${columns} FROM tickets WHERE created_at >= ? AND created_at < ? ORDER BY created_at, id`)
  const rows = statement.iterate(new Date(params.get('from')!).toISOString(), new Date(params.get('to')!).toISOString())
  const yieldEachChunk = params.get('yield') !== '0'
  const source = {
    type: 'direct',
    async pull(controller: { write(text: string): number | Promise<number>; close(): void }) {
      let next = rows.next()
      let text = csvHeader(false)
      while (!next.done) {
        while (!next.done && text.length < 65536) {
          text += csvLine(next.value as TicketRow, false)
          next = rows.next()
        }
        const written = controller.write(text)
        text = ''
        if (typeof written === 'object') await written
        else if (yieldEachChunk) await new Promise<void>((resolve) => setImmediate(resolve))
      }
      statement.finalize()
      controller.close()
    },
    cancel: () => statement.finalize(),
  }
  return new Response(new ReadableStream(source as unknown as UnderlyingDefaultSource<string>))
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request) {
    const url = new URL(request.url)
    return url.pathname === '/export' ? csvExport(url.searchParams) : page(url.searchParams)
  },
})
console.log(server.port)
