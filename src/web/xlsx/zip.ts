// A zip file written as a stream (what an .xlsx is): small parts stored whole, one large part
// deflated by the browser's own CompressionStream('gzip') as it is read (its header and trailer taken off), its CRC and sizes
// in a data descriptor after it (so nothing is held: the file's memory is one chunk or so).
// Sizes stay under 4 GiB (no Zip64): the writer refuses to go past, as Excel's rows would anyway.

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** CRC-32 (the zip's) of `bytes`, continuing from `crc` (0 to start). */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

const LIMIT = 0xffffffff
/** 1 January 2026 00:00, a fixed time for every entry: the file is the same for the same rows. */
const DOS_TIME = 0
const DOS_DATE = ((2026 - 1980) << 9) | (1 << 5) | 1

class Bytes {
  private readonly view: DataView
  readonly bytes: Uint8Array
  private at = 0
  constructor(size: number) {
    this.bytes = new Uint8Array(size)
    this.view = new DataView(this.bytes.buffer)
  }
  u16(value: number): this {
    this.view.setUint16(this.at, value, true)
    this.at += 2
    return this
  }
  u32(value: number): this {
    this.view.setUint32(this.at, value >>> 0, true)
    this.at += 4
    return this
  }
  raw(bytes: Uint8Array): this {
    this.bytes.set(bytes, this.at)
    this.at += bytes.length
    return this
  }
}

interface Entry {
  name: Uint8Array
  flags: number
  method: number
  crc: number
  compressed: number
  size: number
  offset: number
}

function localHeader(entry: Entry): Uint8Array {
  return new Bytes(30 + entry.name.length).u32(0x04034b50).u16(20).u16(entry.flags).u16(entry.method).u16(DOS_TIME).u16(DOS_DATE)
    .u32(entry.crc).u32(entry.compressed).u32(entry.size).u16(entry.name.length).u16(0).raw(entry.name).bytes
}

function centralEntry(entry: Entry): Uint8Array {
  return new Bytes(46 + entry.name.length).u32(0x02014b50).u16(20).u16(20).u16(entry.flags).u16(entry.method).u16(DOS_TIME).u16(DOS_DATE)
    .u32(entry.crc).u32(entry.compressed).u32(entry.size).u16(entry.name.length).u16(0).u16(0).u16(0).u16(0).u32(0).u32(entry.offset).raw(entry.name).bytes
}

const concat = (a: Uint8Array, b: Uint8Array) => {
  const joined = new Uint8Array(a.length + b.length)
  joined.set(a)
  joined.set(b, a.length)
  return joined
}

/** A part of the zip: small bytes stored whole, or a stream deflated as it is read. */
export type ZipPart = { name: string; bytes: Uint8Array } | { name: string; stream: ReadableStream<Uint8Array> }

const UTF8_NAMES = 0x0800
const DESCRIPTOR = 0x0008

/** The zip of `parts`, in order, as a stream read at the reader's pace. */
export function zipStream(parts: ZipPart[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const entries: Entry[] = []
    let offset = 0
    for (const part of parts) {
      const name = encoder.encode(part.name)
      if ('bytes' in part) {
        const entry = { name, flags: UTF8_NAMES, method: 0, crc: crc32(part.bytes), compressed: part.bytes.length, size: part.bytes.length, offset }
        const header = localHeader(entry)
        entries.push(entry)
        offset += header.length + part.bytes.length
        yield header
        yield part.bytes
        continue
      }
      const entry = { name, flags: UTF8_NAMES | DESCRIPTOR, method: 8, crc: 0, compressed: 0, size: 0, offset }
      const header = localHeader(entry)
      yield header
      let size = 0
      const counted = part.stream.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.length
          if (size > LIMIT) throw new RangeError('the sheet is over 4 GiB, more than a zip without Zip64 holds')
          controller.enqueue(chunk)
        },
      }))
      // gzip is deflate between a 10-byte header and an 8-byte trailer holding the CRC-32 and the
      // size: the browser's own CRC, instead of one in JavaScript (a fifth of the workbook's time).
      const reader = counted.pipeThrough(new CompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>).getReader()
      let compressed = 0
      let head = 10
      let tail = new Uint8Array(0)
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        let bytes = value
        if (head > 0) {
          if (head === 10 && bytes.length > 3 && bytes[3] !== 0) throw new Error('a gzip header with fields: not the one CompressionStream writes')
          const skip = Math.min(head, bytes.length)
          head -= skip
          bytes = bytes.subarray(skip)
        }
        // Hold the last 8 bytes back: they may be the trailer.
        const joined = tail.length === 0 ? bytes : concat(tail, bytes)
        const out = joined.subarray(0, Math.max(0, joined.length - 8))
        tail = joined.slice(out.length)
        if (out.length === 0) continue
        compressed += out.length
        yield out
      }
      const trailer = new DataView(tail.buffer, tail.byteOffset, 8)
      const crc = trailer.getUint32(0, true)
      if (trailer.getUint32(4, true) !== size % 2 ** 32) throw new Error('the gzip trailer does not match the sheet it compressed')
      Object.assign(entry, { crc, compressed, size })
      entries.push(entry)
      const descriptor = new Bytes(16).u32(0x08074b50).u32(crc).u32(compressed).u32(size).bytes
      offset += header.length + compressed + descriptor.length
      yield descriptor
    }
    let directory = 0
    for (const entry of entries) {
      const central = centralEntry(entry)
      directory += central.length
      yield central
    }
    yield new Bytes(22).u32(0x06054b50).u16(0).u16(0).u16(entries.length).u16(entries.length).u32(directory).u32(offset).u16(0).bytes
  }
  const generator = chunks()
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await generator.next()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    async cancel(reason) {
      await generator.throw(reason).catch(() => undefined)
    },
  })
}
