
/**
 * One CSV stream out of the exports of consecutive windows: the first as it comes, each later
 * one without its header row (identical to the first's). Later windows are asked for only when
 * the reader gets to them, so memory stays one chunk whatever the range.
 */
export function concatenateCsvWindows(first: ReadableStream<Uint8Array>, rest: (() => Promise<ReadableStream<Uint8Array>>)[]): ReadableStream<Uint8Array> {
  let reader = first.getReader()
  let skippingHeader = false
  let next = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) {
          if (next === rest.length) return controller.close()
          reader = (await rest[next++]!()).getReader()
          skippingHeader = true
          continue
        }
        let chunk = value
        if (skippingHeader) {
          const newline = chunk.indexOf(0x0a)
          if (newline === -1) continue // the header row goes on in the next chunk
          skippingHeader = false
          chunk = chunk.subarray(newline + 1)
        }
        if (chunk.length > 0) return controller.enqueue(chunk)
      }
    },
    async cancel(reason) {
      await reader.cancel(reason)
    },
  })
}
