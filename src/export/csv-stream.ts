import { SQLiteError, type Statement } from 'bun:sqlite'
import type { TenantLease } from '../tenant/pool.ts'
import type { TicketQuery } from '../tickets/query.ts'
import { prepareTicketExport, type TicketRow } from '../tickets/repository.ts'
import { csvHeader, csvLine } from './csv-format.ts'

export type ExportOutcome = 'complete' | 'cancelled' | 'stalled' | 'failed'

export interface ExportStreamOptions {
  lease: TenantLease
  query: TicketQuery
  demo: boolean
  /** A reader that takes nothing for this long loses its export (the statement is released). */
  stallTimeoutMs: number
  /** Bytes of CSV per chunk: large enough to amortise a chunk's cost, small enough to interleave. */
  chunkBytes?: number
  /** Called once, when the export ends in any way, after the statement and lease are released. */
  /** `chars` counts UTF-16 code units of CSV text (equal to bytes for ASCII data). */
  onEnd?: (outcome: ExportOutcome, stats: { rows: number; chars: number; error?: unknown }) => void
}

/** Lets the event loop run I/O (other requests) before the next chunk; see `pull` below. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * A pull-based CSV stream over a lazy statement iterator on a leased tenant connection.
 *
 * Everything that can fail before the first byte fails in this function (preparing the
 * statement and reading the first row), so the caller can still answer with a JSON error. After
 * that, each `pull()` formats about `chunkBytes` of rows: memory stays flat whatever the row
 * count, and a slow reader slows the query instead of filling memory. Every ending (complete,
 * cancel, stall, failure) finalises the statement and releases the lease exactly once. A failure
 * after the first byte errors the stream, so the client sees a truncated transfer, never a file
 * that looks complete.
 */
export function createCsvExportStream(options: ExportStreamOptions): ReadableStream<string> {
  const { lease, query, demo, stallTimeoutMs, chunkBytes = 64 * 1024, onEnd } = options
  let statement: Statement
  let rows: IterableIterator<unknown>
  let next: IteratorResult<unknown>
  try {
    const prepared = prepareTicketExport(lease, query)
    statement = prepared.statement
    rows = statement.iterate(...prepared.values)
    next = rows.next()
  } catch (error) {
    lease.release()
    throw lease.fail(error)
  }

  let rowCount = 0
  let charCount = 0
  let ended = false
  let first = true
  let lastPull = Date.now()
  let controllerRef: ReadableStreamDefaultController<string> | undefined

  const end = (outcome: ExportOutcome, error?: unknown) => {
    if (ended) return
    ended = true
    clearInterval(watchdog)
    try {
      rows.return?.()
      statement.finalize()
    } finally {
      lease.release()
      onEnd?.(outcome, { rows: rowCount, chars: charCount, error })
    }
  }

  // Bun's idle timeout does not end a response stream whose reader stopped reading: pull() is
  // simply not called again. The watchdog notices and releases the statement and the lease.
  const watchdog = setInterval(
    () => {
      if (ended || Date.now() - lastPull < stallTimeoutMs) return
      end('stalled')
      controllerRef?.error(new Error('export reader stalled'))
    },
    Math.max(50, Math.min(1000, stallTimeoutMs / 4)),
  )
  watchdog.unref()

  return new ReadableStream<string>(
    {
      async pull(controller) {
        controllerRef = controller
        lastPull = Date.now()
        // Against a fast reader, Bun calls pull() back to back without returning to I/O, so one
        // export would starve every other request. One macrotask per chunk keeps them served.
        if (!first) await yieldToEventLoop()
        if (ended) return
        try {
          // Closing only in a pull of its own keeps even a one-chunk export a chunked, streamed
          // response: Bun sends a stream that ends in its first pull with a Content-Length instead.
          if (!first && next.done) {
            end('complete')
            controller.close()
            return
          }
          let text = first ? csvHeader(demo) : ''
          first = false
          while (!next.done && text.length < chunkBytes) {
            text += csvLine(next.value as TicketRow, demo)
            rowCount++
            next = rows.next()
          }
          // Strings go to Bun as they are (it writes them as UTF-8): measured faster than
          // encoding each chunk with a TextEncoder first.
          charCount += text.length
          controller.enqueue(text)
        } catch (error) {
          // The file broke under the iterator: drop the handle too, so the next request reopens it.
          if (error instanceof SQLiteError) lease.fail(error)
          end('failed', error)
          controller.error(error)
        }
      },
      cancel() {
        end('cancelled')
      },
    },
    { highWaterMark: 1 },
  )
}
