import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy in front of a real server, on a free port, that can misbehave on purpose: it drops
 * the next `dropNext` connections at once (the client sees a dropped connection, not an HTTP
 * answer), and counts the connections it forwarded. Everything else is passed through byte for byte.
 */
export async function startFlakyProxy(target: { host: string; port: number }) {
  const state = { dropNext: 0, dropped: 0, forwarded: 0, cutNext: 0, cutAfterBytes: 16 * 1024, cut: 0 }
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    if (state.dropNext > 0) {
      state.dropNext--
      state.dropped++
      client.destroy()
      return
    }
    state.forwarded++
    const upstream = connect(target.port, target.host)
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    client.pipe(upstream)
    // An answer that passes cutAfterBytes while cuts are asked for is reset there, mid-body,
    // its head already sent (small answers, /v1/queues or a page, go through whole).
    let passed = 0
    upstream.on('data', (chunk: Buffer) => {
      // Counted per answer (a kept-alive connection carries several): from its status line on.
      if (chunk.subarray(0, 9).toString('latin1') === 'HTTP/1.1 ') passed = 0
      passed += chunk.length
      if (state.cutNext > 0 && passed > state.cutAfterBytes) {
        state.cutNext--
        state.cut++
        upstream.destroy()
        // The answer up to the cut, then a reset: its head and part of its body arrive (a cut
        // before any byte would be a failed request, which the client retries by itself).
        client.write(chunk.subarray(0, Math.max(0, state.cutAfterBytes - (passed - chunk.length))), () => client.resetAndDestroy())
        return
      }
      client.write(chunk)
    })
    upstream.on('end', () => client.end())
    const close = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', close)
    upstream.on('error', close)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    base: `http://127.0.0.1:${port}`,
    state,
    /** Drops the next `count` connections; open keep-alive connections are closed first, so the next request must connect. */
    dropNext(count: number) {
      for (const socket of sockets) socket.destroy()
      state.dropNext = count
    },
    /** Resets the next `count` answers that pass `afterBytes` (a server dying mid-download); open connections are closed first. */
    cutNext(count: number, afterBytes = 16 * 1024) {
      for (const socket of sockets) socket.destroy()
      state.cutNext = count
      state.cutAfterBytes = afterBytes
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/**
 * `upstream`'s first chunk, then nothing, for ever: a server that stalls in the middle of a body.
 * For the tests of what a client or loader does when the next chunk never comes.
 */
export function firstChunkThenSilence(upstream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = upstream.getReader()
  let sent = false
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent) return new Promise<void>(() => undefined)
      sent = true
      controller.enqueue((await reader.read()).value!)
    },
  })
}
