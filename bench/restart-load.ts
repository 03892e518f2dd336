import { connect, type Socket } from 'node:net'

/**
 * Steady load for measuring restarts: clients that count every request that does not come back
 * whole as failed, and never retry (fetch may retry a request on a reused connection, which would
 * hide a reset). Two kinds of client, as a service meets them: keep-alive clients paging on one
 * connection, which open a new one only when an answer says `Connection: close`; and clients that
 * open a connection per request (what a refused connection or a reset queue shows up in).
 */

export interface LoadCounts {
  /** Requests answered in full with a 2xx status. */
  ok: number
  /** Requests that failed, by client and cause: `keep-alive: closed before answering`, `connection per request: ECONNRESET`, … */
  failed: Record<string, number>
  /** Answers that carried `Connection: close` (a draining worker telling a keep-alive client to reconnect). */
  toldToClose: number
  /** Connections the clients opened or tried to (what a reset queue on a closing listener fails). */
  newConnections: number
}

export interface LoadOptions {
  base: string
  path: string
  headers?: Record<string, string>
  keepAliveClients: number
  connectionPerRequestClients: number
}

export const failedCount = (counts: LoadCounts) => Object.values(counts.failed).reduce((sum, n) => sum + n, 0)

/** Starts the clients; `stop` lets each finish its request in progress and returns the counts. */
export function startLoad(options: LoadOptions): { counts: LoadCounts; stop(): Promise<LoadCounts> } {
  const counts: LoadCounts = { ok: 0, failed: {}, toldToClose: 0, newConnections: 0 }
  let running = true
  const fail = (cause: string) => (counts.failed[cause] = (counts.failed[cause] ?? 0) + 1)
  const url = new URL(options.base)
  const head = (close: boolean) =>
    [`GET ${options.path} HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(options.headers ?? {}).map(([k, v]) => `${k}: ${v}`), ...(close ? ['Connection: close'] : []), '', ''].join('\r\n')

  const client = async (keepAlive: boolean) => {
    const kind = keepAlive ? 'keep-alive' : 'connection per request'
    let connection: Connection | undefined
    while (running) {
      try {
        if (!connection) {
          counts.newConnections++
          connection = await Connection.open(url.hostname, Number(url.port))
        }
        const answer = await connection.exchange(head(!keepAlive))
        if (answer.status >= 200 && answer.status < 300) counts.ok++
        else fail(`${kind}: status ${answer.status}`)
        if (answer.close && keepAlive) counts.toldToClose++
        if (answer.close || !keepAlive) {
          connection.end()
          connection = undefined
        }
      } catch (error) {
        fail(`${kind}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
        connection?.end()
        connection = undefined
      }
    }
    connection?.end()
  }
  const clients = [
    ...Array.from({ length: options.keepAliveClients }, () => client(true)),
    ...Array.from({ length: options.connectionPerRequestClients }, () => client(false)),
  ]
  return {
    counts,
    async stop() {
      running = false
      await Promise.all(clients)
      return counts
    },
  }
}

/** One HTTP/1.1 connection, one exchange at a time; answers must have a Content-Length. */
class Connection {
  private buffer = Buffer.alloc(0)
  private waiting: (() => void) | undefined
  private error: Error | undefined
  private ended = false

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      this.waiting?.()
    })
    socket.on('error', (error) => {
      this.error = error
      this.waiting?.()
    })
    socket.on('close', () => {
      this.ended = true
      this.waiting?.()
    })
  }

  static open(host: string, port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port })
      socket.once('connect', () => resolve(new Connection(socket)))
      socket.once('error', reject)
    })
  }

  async exchange(request: string): Promise<{ status: number; close: boolean }> {
    this.socket.write(request)
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n')
      if (end >= 0) {
        const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n')
        const status = Number(lines[0]!.split(' ')[1])
        const header = (name: string) => lines.find((line) => line.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim()
        const length = Number(header('content-length') ?? NaN)
        if (Number.isNaN(length)) throw new Error('answer without Content-Length')
        if (this.buffer.length >= end + 4 + length) {
          this.buffer = this.buffer.subarray(end + 4 + length)
          return { status, close: header('connection')?.toLowerCase() === 'close' }
        }
      }
      if (this.error) throw this.error
      if (this.ended) throw new Error(this.buffer.length === 0 ? 'closed before answering' : 'closed mid-answer')
      await new Promise<void>((resolve) => (this.waiting = resolve))
      this.waiting = undefined
    }
  }

  end(): void {
    this.socket.destroy()
  }
}
