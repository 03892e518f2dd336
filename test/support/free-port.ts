import { createServer } from 'node:net'

/**
 * A loopback port free at the moment of asking, for a server the test starts (redis-server,
 * PostgreSQL). Another process can take it before the server binds it: callers retry.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
