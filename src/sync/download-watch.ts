import { NetworkError, TimeoutError } from '../client/index.ts'

/** A window's download broke off (a connection reset, a body cut short): the API's side failed, and the window is worth asking for again. */
export class DownloadBrokeError extends NetworkError {}

/** How a window's download ended, told apart from what the target did with it. */
export interface WatchedDownload {
  stream: ReadableStream<Uint8Array>
  /** The error the download itself failed with, if it did; undefined while it is whole. */
  failure(): Error | undefined
}

/**
 * The stream as it is, remembering a failure of the download itself. A target that reads it
 * sees the failure through its own engine (PostgreSQL's COPY, DuckDB's spool) and may report it
 * in its own words, as if the target had failed: the run asks this instead, so that a dropped
 * connection is named as the API's and retried (sync.ts), and a target's own failure is not.
 * A stall (TimeoutError) and an abort are kept as they are: asking again would stall again.
 */
export function watchDownload(source: ReadableStream<Uint8Array>): WatchedDownload {
  const reader = source.getReader()
  let failed: Error | undefined
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let result: Awaited<ReturnType<typeof reader.read>>
      try {
        result = await reader.read()
      } catch (cause) {
        failed = cause instanceof TimeoutError || (cause as Error)?.name === 'AbortError' ? (cause as Error) : new DownloadBrokeError(`the download broke off: ${describe(cause)}`, cause)
        controller.error(failed)
        return
      }
      if (result.done) controller.close()
      else controller.enqueue(result.value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  return { stream, failure: () => failed }
}

function describe(cause: unknown): string {
  const error = cause as { code?: unknown; message?: unknown }
  const code = typeof error?.code === 'string' ? `${error.code}: ` : ''
  // Bun appends a hint about `verbose: true` to a fetch's socket errors: not ours to pass on.
  const message = String(error?.message ?? cause).split(/\. For more information/)[0]!
  return `${code}${message}`
}
