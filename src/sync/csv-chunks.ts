import { open, rm } from 'node:fs/promises'
import { join } from 'node:path'

const QUOTE = 0x22
const NEWLINE = 0x0a

/**
 * Cuts a CSV byte stream into files of about `chunkBytes` each, every one starting with the
 * stream's header row and ending at the end of a row, and hands each finished file to `consume`
 * while the next one downloads: the download and the reader of the files overlap, and at most
 * one file waits to be read while another is written, so disk and memory stay bounded whatever
 * the stream's length. A newline inside a quoted field does not end a row (quotes are counted:
 * an escaped quote `""` counts twice, so the parity is right). `consume` runs one file at a
 * time, in order; each file is removed after it.
 */
export async function spoolCsvInChunks(
  stream: ReadableStream<Uint8Array>,
  dir: string,
  chunkBytes: number,
  consume: (file: string) => Promise<void>,
): Promise<void> {
  let header: Uint8Array | null = null
  let headerParts: Uint8Array[] = []
  let index = 0
  let file: { path: string; handle: Awaited<ReturnType<typeof open>>; bytes: number } | null = null
  let inQuotes = false
  let consuming: Promise<void> = Promise.resolve()
  let failure: unknown = null

  const startFile = async () => {
    const path = join(dir, `chunk-${index++}.csv`)
    const handle = await open(path, 'w')
    await writeAll(handle, header!)
    file = { path, handle, bytes: 0 }
  }
  const finishFile = async () => {
    const done = file!
    file = null
    await done.handle.close()
    // Wait for the previous file to be read before queueing this one: one file waits at most.
    await consuming
    if (failure) throw failure
    consuming = consume(done.path)
      .catch((error) => {
        failure = error
      })
      .finally(() => rm(done.path, { force: true }))
  }
  /** The index just past the last row end in `bytes` that is outside quotes, or -1; updates the parity. */
  const lastRowEnd = (bytes: Uint8Array): number => {
    let end = -1
    let at = 0
    for (;;) {
      const quote = bytes.indexOf(QUOTE, at)
      const stop = quote === -1 ? bytes.length : quote
      // (lastIndexOf counts a negative start from the end: an empty span is skipped, not searched.)
      if (!inQuotes && stop > at) {
        const newline = bytes.lastIndexOf(NEWLINE, stop - 1)
        if (newline >= at) end = newline + 1
      }
      if (quote === -1) return end
      inQuotes = !inQuotes
      at = quote + 1
    }
  }

  const reader = stream.getReader()
  try {
    for (;;) {
      // A file that failed to load ends the download at once, not when the next file is full.
      if (failure) throw failure
      const { done, value } = await reader.read()
      if (done) break
      let bytes = value
      if (header === null) {
        // The header row may come in pieces: gather it first.
        const newline = bytes.indexOf(NEWLINE)
        if (newline === -1) {
          headerParts.push(bytes)
          continue
        }
        header = Buffer.concat([...headerParts, bytes.subarray(0, newline + 1)])
        headerParts = []
        bytes = bytes.subarray(newline + 1)
        await startFile()
      }
      if (bytes.length === 0) continue
      const end = lastRowEnd(bytes)
      if (file!.bytes + bytes.length >= chunkBytes && end > 0) {
        await writeAll(file!.handle, bytes.subarray(0, end))
        await finishFile()
        await startFile()
        bytes = bytes.subarray(end)
      }
      if (bytes.length > 0) {
        await writeAll(file!.handle, bytes)
        file!.bytes += bytes.length
      }
    }
    if (header === null) throw new Error('the CSV export ended before its header row')
    if (file !== null && (file as { bytes: number }).bytes > 0) await finishFile()
    else if (file !== null) {
      const empty = file as { path: string; handle: Awaited<ReturnType<typeof open>> }
      file = null
      await empty.handle.close()
      await rm(empty.path, { force: true })
    }
    await consuming
    if (failure) throw failure
  } catch (error) {
    await reader.cancel().catch(() => undefined)
    if (file !== null) await (file as { handle: Awaited<ReturnType<typeof open>> }).handle.close().catch(() => undefined)
    await consuming.catch(() => undefined)
    throw error
  }
}

/**
 * Writes all of `bytes`: a write may write fewer (a file system nearly full writes what fits and
 * says how much), and a chunk file cut short would be read as a broken CSV rather than a full
 * disk. The next write of the rest then fails with ENOSPC, which is what is said.
 */
async function writeAll(handle: Awaited<ReturnType<typeof open>>, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.length - at)
    if (bytesWritten <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    at += bytesWritten
  }
}
