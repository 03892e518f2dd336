import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { tempDataDir } from '../support/harness.ts'
import { parseCsv } from '../support/fixtures.ts'
import { spoolCsvInChunks } from '../../src/sync/csv-chunks.ts'

const temp = tempDataDir()
afterAll(() => temp.cleanup())

/** A stream of `text` in pieces of `size` bytes, as a download arrives. */
function pieces(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.subarray(at, (at += size)))
    },
  })
}

describe('spoolCsvInChunks', () => {
  // Quoted fields with newlines, commas and escaped quotes: none of them ends a row.
  const header = 'id,note\r\n'
  const rows = Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? `t${i},"two\r\nlines, and ""quotes"""\r\n` : `t${i},plain\r\n`))
  const csv = header + rows.join('')

  test.each([1, 7, 64, 4096])('pieces of %p bytes: every file is the header and whole rows, together the input', async (size) => {
    const files: string[] = []
    await spoolCsvInChunks(pieces(csv, size), temp.dir, 200, async (file) => {
      files.push(readFileSync(file, 'utf8'))
    })
    expect(files.length).toBeGreaterThan(1)
    for (const file of files) {
      expect(file.startsWith(header)).toBe(true)
      expect(file.endsWith('\r\n')).toBe(true)
      // Each file parses on its own (an independent CSV reader).
      expect((await parseCsv(file)).every((row) => row.note === 'plain' || row.note === 'two\r\nlines, and "quotes"')).toBe(true)
    }
    expect(header + files.map((file) => file.slice(header.length)).join('')).toBe(csv)
  })

  test('a consumer that fails fails the spool, and the download is cancelled', async () => {
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(csv))
      },
      cancel() {
        cancelled = true
      },
    })
    await expect(spoolCsvInChunks(stream, temp.dir, 200, async () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full')
    expect(cancelled).toBe(true)
  })

  test('an export with only its header row hands over no file', async () => {
    const files: string[] = []
    await spoolCsvInChunks(pieces(header, 3), temp.dir, 200, async (file) => void files.push(file))
    expect(files).toEqual([])
  })
})
