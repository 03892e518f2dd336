/**
 * The benchmark's framework-free baseline: Bun.serve + bun:sqlite on the same tenant file,
 * without auth, limits or validation.
 * - `/?from&to&limit&cursor`: the same keyset page query as GET /v1/tickets (no filter); see
 *   baseline-page.ts.
 * - `/export?from&to&yield=1|0`: the same export query, the service's CSV formatter, written to
 *   a Bun direct stream that waits on the socket's backpressure, yielding one macrotask per
 *   ~64 KB chunk (`yield=1`, the service's mechanism) or never (`yield=0`).
 * `bun bench/baseline-server.ts <tenant file>`; prints its port on stdout.
 */
import { Database } from 'bun:sqlite'
import { csvHeader, csvLine } from '../src/export/csv-format.ts'
import type { Ticket } from '../src/contract/schemas.ts'
import { BASELINE_COLUMNS, baselinePageHandler } from './baseline-page.ts'

const db = new Database(process.argv[2]!, { readonly: true })
const page = baselinePageHandler(db)

function csvExport(params: URLSearchParams): Response {
  const statement = db.prepare(`SELECT ${BASELINE_COLUMNS} FROM tickets WHERE created_at >= ? AND created_at < ? ORDER BY created_at, id`)
  const rows = statement.iterate(new Date(params.get('from')!).toISOString(), new Date(params.get('to')!).toISOString())
  const yieldEachChunk = params.get('yield') !== '0'
  const source = {
    type: 'direct',
    async pull(controller: { write(text: string): number | Promise<number>; close(): void }) {
      let next = rows.next()
      let text = csvHeader(false)
      while (!next.done) {
        while (!next.done && text.length < 65536) {
          text += csvLine(next.value as Ticket, false)
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
