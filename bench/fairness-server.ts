/**
 * The fairness experiment's server (framework-free, like the page baseline): `/page` runs the
 * 500-row page query; `/export?yield=1|0` streams the whole tenant as CSV with the service's
 * formatter, pull-based, yielding one macrotask per ~64 KB chunk or not at all.
 * `bun bench/fairness-server.ts <tenant file>`; prints its port.
 */
import { Database } from 'bun:sqlite'
import { csvHeader, csvLine } from '../src/export/csv-format.ts'
import type { TicketRow } from '../src/tickets/repository.ts'

const db = new Database(process.argv[2]!, { readonly: true })
const columns = `id, number, queue_id AS queueId, location_id AS locationId, status, created_at AS createdAt, called_at AS calledAt,
  completed_at AS completedAt, cancelled_at AS cancelledAt, skipped_at AS skippedAt, no_show_at AS noShowAt,
  called_by_device_session_id AS calledByDeviceSessionId`
const page = db.prepare(`SELECT ${columns} FROM tickets WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 501`)

function exportStream(yieldEachChunk: boolean): ReadableStream<string> {
  const statement = db.prepare(`SELECT ${columns} FROM tickets ORDER BY created_at, id`)
  const rows = statement.iterate()
  let next = rows.next()
  let first = true
  return new ReadableStream<string>(
    {
      async pull(controller) {
        if (!first && yieldEachChunk) await new Promise<void>((resolve) => setImmediate(resolve))
        if (!first && next.done) {
          statement.finalize()
          controller.close()
          return
        }
        let text = first ? csvHeader(false) : ''
        first = false
        while (!next.done && text.length < 65536) {
          text += csvLine(next.value as TicketRow, false)
          next = rows.next()
        }
        controller.enqueue(text)
      },
      cancel() {
        statement.finalize()
      },
    },
    { highWaterMark: 1 },
  )
}

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(request) {
    const url = new URL(request.url)
    if (url.pathname === '/export') return new Response(exportStream(url.searchParams.get('yield') === '1'))
    const at = url.searchParams.get('at') ?? ''
    return Response.json({ items: page.all(at, '') })
  },
})
console.log(server.port)
