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

  static async get(base: string, path: string, headers: Record<string, string>, options: { paused?: boolean } = {}): Promise<RawHttpClient> {
    const url = new URL(base)
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
    const client = new RawHttpClient(socket)
    const host = Object.keys(headers).some((k) => k.toLowerCase() === 'host') ? [] : [`Host: ${url.host}`]
    const lines = [`GET ${path} HTTP/1.1`, ...host, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', '']
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
