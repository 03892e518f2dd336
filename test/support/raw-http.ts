import { connect, type Socket } from 'node:net'

/**
 * A bare HTTP/1.1 client over a TCP socket, for what fetch hides: a reader that stops reading,
 * reads slowly, or hangs up mid-body, and whether a chunked body ended with its last chunk.
 */
export class RawHttpClient {
  readonly socket: Socket
  private chunks: Buffer[] = []
  bytes = 0
  closed: Promise<void>

  private constructor(socket: Socket) {
    this.socket = socket
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk)
      this.bytes += chunk.length
    })
    this.closed = new Promise((resolve) => socket.on('close', () => resolve()))
    socket.on('error', () => undefined)
  }

  static async get(base: string, path: string, headers: Record<string, string>, options: { paused?: boolean; method?: string } = {}): Promise<RawHttpClient> {
    const url = new URL(base)
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
    const client = new RawHttpClient(socket)
    const host = Object.keys(headers).some((k) => k.toLowerCase() === 'host') ? [] : [`Host: ${url.host}`]
    const lines = [`${options.method ?? 'GET'} ${path} HTTP/1.1`, ...host, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', '']
    socket.write(lines.join('\r\n'))
    if (options.paused) socket.pause()
    return client
  }

  pause(): void {
    this.socket.pause()
  }

  resume(): void {
    this.socket.resume()
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('latin1')
  }

  /** The response's body so far, its chunked framing removed (the head and the chunk sizes dropped). */
  body(): Buffer {
    const raw = Buffer.concat(this.chunks)
    return dechunk(raw.subarray(raw.indexOf('\r\n\r\n') + 4))
  }

  /** Whether the response so far ends with the last-chunk marker of a chunked body. */
  endedCleanly(): boolean {
    return this.text().endsWith('\r\n0\r\n\r\n')
  }

  destroy(): void {
    this.socket.destroy()
  }
}

/** Waits until `condition` holds, checking every few milliseconds; fails after `timeoutMs`. */
export async function eventually(condition: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(5)
  }
}

/** `eventually` for a condition that must be awaited (a request), checked every 50 ms. */
export async function eventuallyAsync(condition: () => Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(50)
  }
}

export interface RawResponse {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string
  /** Everything received, as sent. */
  raw: string
}

/**
 * Sends `request` byte for byte (a request line and headers written by hand: no Host, a broken
 * one, an absolute-form target) and reads one response until the server closes the connection.
 * The request should end the connection itself (HTTP/1.0, or `Connection: close`).
 */
export async function rawExchange(base: string, request: string): Promise<RawResponse> {
  const url = new URL(base)
  const socket = connect({ host: url.hostname, port: Number(url.port) })
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  socket.on('error', () => undefined)
  socket.write(Buffer.from(request, 'latin1'))
  await closed
  const raw = Buffer.concat(chunks).toString('latin1')
  const end = raw.indexOf('\r\n\r\n')
  const [statusLine = '', ...lines] = raw.slice(0, end === -1 ? raw.length : end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: end === -1 ? '' : raw.slice(end + 4), raw }
}

/** The data of a chunked HTTP/1.1 body, up to its last chunk or as far as it goes. */
export function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = []
  let offset = 0
  for (;;) {
    const lineEnd = body.indexOf('\r\n', offset)
    if (lineEnd === -1) break
    const size = parseInt(body.subarray(offset, lineEnd).toString(), 16)
    if (!size) break
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
    offset = lineEnd + 2 + size + 2
  }
  return Buffer.concat(parts)
}
