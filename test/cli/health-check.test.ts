import { afterAll, beforeAll, expect, test } from 'bun:test'
import { dataDirWithLongExport } from '../support/harness.ts'
import { startServerProcess, type ServerProcess } from '../support/server-process.ts'
import { freePort } from '../support/free-port.ts'

/**
 * `queue-api health` is liveness (/healthz), the container image's health check: a server whose
 * Redis is unreachable (ready: no; alive: yes) passes it, and fails `health --ready` (/readyz),
 * what a balancer should ask. Run as the compiled file's entry point from source.
 */
let server: ServerProcess
let cleanup: () => void

beforeAll(async () => {
  const { dir, cleanup: remove } = dataDirWithLongExport('Health check')
  cleanup = remove
  // Nothing listens on this port: the limits fail closed, so /readyz answers 503.
  server = await startServerProcess({ DATA_DIR: dir, REDIS_URL: `redis://127.0.0.1:${await freePort()}` })
})
afterAll(async () => {
  await server?.stop()
  cleanup?.()
})

const health = (args: string[], port: string) => {
  const run = Bun.spawnSync([process.execPath, 'src/cli/queue-api.ts', 'health', ...args], { env: { ...process.env, HOST: '127.0.0.1', PORT: port }, stdout: 'pipe', stderr: 'pipe' })
  return { status: run.exitCode, stderr: run.stderr.toString() }
}

test('Redis unreachable: alive (health, 0) but not ready (health --ready, 1, one line naming /readyz and its 503)', async () => {
  const port = new URL(server.base).port
  expect((await fetch(`${server.base}/readyz`)).status).toBe(503)
  expect(health([], port)).toEqual({ status: 0, stderr: '' })
  expect(health(['--ready'], port)).toEqual({ status: 1, stderr: `queue-api health: http://127.0.0.1:${port}/readyz answered 503: not ready\n` })
})

test('an unknown argument: one line, exit 2; nothing listening: 1, naming /healthz', async () => {
  expect(health(['--live'], '3000')).toEqual({ status: 2, stderr: 'queue-api: health takes only --ready (got "--live"); it asks the server of this environment\'s HOST and PORT\n' })
  expect(health(['--ready', '--ready'], '3000').status).toBe(2)
  const closed = health([], '1')
  expect(closed.status).toBe(1)
  expect(closed.stderr).toMatch(/^queue-api health: no answer from http:\/\/127\.0\.0\.1:1\/healthz: .*\n$/)
})
