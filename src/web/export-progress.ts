// How far into the range a download has come: the export is in creation order, so the last
// row's createdAt against the range's bounds. Read from the last whole line of each chunk only.

const LF = 0x0a

/** A pass-through of the export's bytes that reports the fraction of [fromMs, toMs) its rows have reached. */
export function rangeProgress(fromMs: number, toMs: number, onFraction: (fraction: number) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder()
  let createdAt = -1
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk)
      const end = chunk.lastIndexOf(LF)
      if (end <= 0) return
      if (createdAt < 0) {
        // The header row starts the first chunk (a header longer than a chunk is not an export).
        const headerEnd = chunk.indexOf(LF)
        createdAt = decoder.decode(chunk.subarray(0, headerEnd)).trim().split(',').indexOf('createdAt')
      }
      const start = chunk.lastIndexOf(LF, end - 1) + 1
      if (start <= 0 || createdAt < 0) return
      const line = decoder.decode(chunk.subarray(start, end))
      if (line.includes('"')) return // a quoted field may hold commas: the next chunk will tell
      const created = Date.parse(line.split(',')[createdAt] ?? '')
      if (!Number.isNaN(created)) onFraction(Math.min(1, Math.max(0, (created - fromMs) / (toMs - fromMs))))
    },
  })
}
