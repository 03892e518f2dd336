import { SQLiteError, type Statement } from 'bun:sqlite'
import type { TenantLease } from '../tenant/pool.ts'
import { endSnapshot } from '../tenant/read.ts'
import type { TicketQuery } from '../tickets/query.ts'
import { prepareTicketExport, type TicketRow } from '../tickets/repository.ts'
import { csvHeader, csvLine } from './csv-format.ts'

export type ExportOutcome = 'complete' | 'cancelled' | 'stalled' | 'failed'

export interface ExportStreamOptions {
  /**
   * A connection of the export's own. Its caller may have begun a read transaction on it (so
   * that what it read first, the X-Changes-Token, comes from the rows' snapshot): the stream
   * ends it with its statement.
   */
  lease: TenantLease
  query: TicketQuery
  /** changedAfter: only tickets inserted or changed after this version of the change log. */
  sinceVersion?: number | null
  demo: boolean
  /** A reader that takes nothing for this long loses its export (the statement is released). */
  stallTimeoutMs: number
  /** Bytes of CSV per chunk: large enough to amortise a chunk's cost, small enough to interleave. */
  chunkBytes?: number
  /**
   * Called once, when the export ends in any way, after the statement and lease are released.
   * `chars` counts UTF-16 code units of CSV text (equal to bytes for ASCII data).
   */
  onEnd?: (outcome: ExportOutcome, stats: { rows: number; chars: number; error?: unknown }) => void
  /** Told after each chunk is formatted: its rows and its UTF-8 bytes. */
  onChunk?: (rows: number, bytes: number) => void
}

/** Lets the event loop run I/O (other requests) before the next chunk; see `pull` below. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** The part of Bun's direct-stream controller used here. */
interface DirectController {
  /** Returns a promise when the socket pushes back: awaiting it is the backpressure. */
  write(data: string): number | Promise<number>
  close(error?: Error): void
}

/**
 * A CSV stream over a lazy statement iterator on a tenant connection leased for this export.
 *
 * Everything that can fail before the first byte fails in this function (preparing the
 * statement and reading the first row), so the caller can still answer with a JSON error. After
 * that, rows are formatted about `chunkBytes` at a time and written straight to the response:
 * a Bun "direct" stream, with no queue between the formatter and the socket (measured faster
 * than a pull-based stream; see docs/architecture.md#direct-stream-and-backpressure). Memory stays flat whatever the row count: a write
 * the socket cannot take yet returns a promise, and the loop waits for it, so a slow reader
 * slows the query instead of filling memory. Every ending (complete, cancel, stall, failure)
 * finalises the statement and releases the lease exactly once. A failure after the first byte
 * aborts the response, so the client sees a truncated transfer, never a file that looks complete.
 */
export function createCsvExportStream(options: ExportStreamOptions): ReadableStream<string> {
  const { lease, query, sinceVersion = null, demo, stallTimeoutMs, chunkBytes = 64 * 1024, onEnd, onChunk } = options
  let statement: Statement
  let rows: IterableIterator<unknown>
  let next: IteratorResult<unknown>
  try {
    const prepared = prepareTicketExport(lease, query, sinceVersion)
    statement = prepared.statement
    rows = statement.iterate(...prepared.values)
    next = rows.next()
  } catch (error) {
    endSnapshot(lease)
    lease.release()
    // Our SQL is fixed, so a SQLite error here means the file cannot be served (503); anything
    // else is a bug of ours and must show as one (500), not as the organisation's data.
    if (error instanceof SQLiteError) throw lease.fail(error)
    throw error
  }

  let rowCount = 0
  let charCount = 0
  let ended = false
  let lastProgress = Date.now()
  let controllerRef: DirectController | undefined

  const end = (outcome: ExportOutcome, error?: unknown) => {
    if (ended) return
    ended = true
    clearInterval(watchdog)
    try {
      rows.return?.()
      statement.finalize()
      endSnapshot(lease)
    } finally {
      lease.release()
      onEnd?.(outcome, { rows: rowCount, chars: charCount, error })
    }
  }

  // A reader that stops reading leaves a write waiting for the socket forever: Bun's idle
  // timeout does not end such a response. The watchdog notices, releases the statement and the
  // lease, and aborts the response.
  const watchdog = setInterval(
    () => {
      if (ended || Date.now() - lastProgress < stallTimeoutMs) return
      end('stalled')
      controllerRef?.close(new Error('export reader stalled'))
    },
    Math.max(50, Math.min(1000, stallTimeoutMs / 4)),
  )
  watchdog.unref()

  /** The next ~chunkBytes of CSV: the header first, then whole lines. */
  const nextChunk = (header: boolean): string => {
    let text = header ? csvHeader(demo) : ''
    const rowsBefore = rowCount
    while (!next.done && text.length < chunkBytes) {
      text += csvLine(next.value as TicketRow, demo)
      rowCount++
      next = rows.next()
    }
    charCount += text.length
    onChunk?.(rowCount - rowsBefore, Buffer.byteLength(text, 'utf8'))
    return text
  }

  const source = {
    type: 'direct' as const,
    async pull(controller: DirectController) {
      controllerRef = controller
      try {
        let header = true
        while (!ended) {
          // Strings go to Bun as they are (it writes them as UTF-8 into the socket's buffer).
          const written = controller.write(nextChunk(header))
          header = false
          lastProgress = Date.now()
          // A pending write is the socket's backpressure: wait for it to drain. Otherwise
          // still return to the event loop once per chunk: a loop that never yields would let
          // one export starve every other request. (Waiting before the close also keeps a
          // one-chunk export chunked: Bun gives a stream that ends in the tick of its first
          // write a Content-Length instead.)
          if (typeof written === 'object') await written
          else await yieldToEventLoop()
          if (next.done) break
        }
        if (ended) return
        end('complete')
        controller.close()
      } catch (error) {
        if (ended) return
        // The file broke under the iterator: drop the handle too, so the next request reopens it.
        if (error instanceof SQLiteError) lease.fail(error)
        end('failed', error)
        controller.close(error instanceof Error ? error : new Error(String(error)))
      }
    },
    cancel() {
      end('cancelled')
    },
  }
  // bun-types describes the direct source on Bun's own ReadableStream overload only.
  return new ReadableStream(source as unknown as UnderlyingDefaultSource<string>)
}
