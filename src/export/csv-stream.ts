import type { TenantSnapshot } from '../tenant/snapshot.ts'
import type { Ticket } from '../contract/schemas.ts'
import { csvHeader, csvLine } from './csv-format.ts'

/** `cancelled`: the client left; `shutdown`: the server's shutdown drain ended before the export did. */
export type ExportOutcome = 'complete' | 'cancelled' | 'stalled' | 'failed' | 'shutdown'

export interface ExportStreamOptions {
  /**
   * The export's snapshot, on a connection of its own; its caller may have read from it first
   * (the X-Changes-Token, which must come from the rows' snapshot). The stream iterates the rows
   * in it and closes it, however the export ends.
   */
  snapshot: TenantSnapshot
  /** The export's query, its SQL and values (TicketQueries.exportQuery). */
  select: { sql: string; values: readonly (string | number)[] }
  demo: boolean
  /** A reader that takes nothing for this long loses its export (the statement is released). */
  stallTimeoutMs: number
  /** Bytes of CSV per chunk: large enough to amortise a chunk's cost, small enough to interleave. */
  chunkBytes?: number
  /**
   * Called once, when the export ends in any way, after the snapshot is closed.
   * `chars` counts UTF-16 code units of CSV text (equal to bytes for ASCII data).
   */
  onEnd?: (outcome: ExportOutcome, stats: { rows: number; chars: number; error?: unknown }) => void
  /** Told after each chunk is formatted, with its rows and its UTF-8 bytes (the metrics' progress). */
  onChunk?: (rows: number, bytes: number) => void
  /** Aborted when the server's shutdown drain runs out: the export ends `shutdown` and its response is aborted. */
  shutdown?: AbortSignal
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
 * A CSV stream over the export's snapshot, written chunk by chunk to a Bun "direct" stream
 * (docs/decisions/0008-direct-stream-export.md). What can fail before the first byte (the
 * statement, the first row) fails in this function, so the caller can still answer with JSON;
 * a write the socket cannot take is awaited, so a slow reader slows the query, not memory.
 * Every ending closes the snapshot exactly once; a failure after the first byte aborts the
 * response, so the client sees a truncated transfer, never a file that looks complete.
 */
export function createCsvExportStream(options: ExportStreamOptions): ReadableStream<string> {
  const { snapshot, select, demo, stallTimeoutMs, chunkBytes = 64 * 1024, onEnd, onChunk, shutdown } = options
  // A failure here closes the snapshot and throws: 503 for a file that broke, a bug of ours as itself (500).
  snapshot.iterate(select.sql, select.values)
  let next = snapshot.next()

  let rowCount = 0
  let charCount = 0
  let ended = false
  // performance.now(): a step of the wall clock must neither stall an export nor keep a stalled one.
  let lastProgress = performance.now()
  let controllerRef: DirectController | undefined

  const end = (outcome: ExportOutcome, error?: unknown) => {
    if (ended) return
    ended = true
    clearInterval(watchdog)
    shutdown?.removeEventListener('abort', cutByShutdown)
    try {
      snapshot.close()
    } finally {
      onEnd?.(outcome, { rows: rowCount, chars: charCount, error })
    }
  }

  // Bun's idle timeout is lifted while an export streams, so this watchdog is its stall rule: it
  // closes the snapshot (statement, transaction, lease) and aborts the response.
  const watchdog = setInterval(
    () => {
      if (ended || performance.now() - lastProgress < stallTimeoutMs) return
      end('stalled')
      controllerRef?.close(new Error('export reader stalled'))
    },
    Math.max(50, Math.min(1000, stallTimeoutMs / 4)),
  )
  watchdog.unref()

  // Ended here rather than by the server closing the connection, which would read as the client leaving.
  const cutByShutdown = () => {
    end('shutdown')
    controllerRef?.close(new Error('server shutting down'))
  }
  shutdown?.addEventListener('abort', cutByShutdown, { once: true })

  /** The next ~chunkBytes of CSV: the header first, then whole lines. */
  const nextChunk = (header: boolean): string => {
    let text = header ? csvHeader(demo) : ''
    const rowsBefore = rowCount
    while (!next.done && text.length < chunkBytes) {
      text += csvLine(next.value as Ticket, demo)
      rowCount++
      next = snapshot.next()
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
          lastProgress = performance.now()
          // Wait out the socket's backpressure, else still yield once per chunk so that one export
          // cannot starve other requests (and a one-chunk export stays chunked: Bun gives a
          // stream that ends in its first write's tick a Content-Length).
          if (typeof written === 'object') await written
          else await yieldToEventLoop()
          if (next.done) break
        }
        if (ended) return
        end('complete')
        controller.close()
      } catch (error) {
        if (ended) return
        // The snapshot is closed already, and a file that broke under the iterator failed (the next request reopens it).
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
