import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { join } from 'node:path'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { tempDataDir, openTenant } from '../support/harness.ts'
import { writeBulkTickets, writeStructure } from '../support/fixtures.ts'
import { startServerProcess } from '../support/server-process.ts'
import { eventually, eventuallyAsync } from '../support/raw-http.ts'

let dataDir: string
let cleanup: () => void
let paidToken: string
let demoToken: string

beforeEach(() => {
  ;({ dir: dataDir, cleanup } = tempDataDir())
  const store = new ControlStore(dataDir)
  const tokens: string[] = []
  for (const plan of ['paid', 'demo'] as const) {
    const org = createOrganisationWithTenant(store, { name: `Process ${plan}`, plan, apiEnabled: true, now: Date.now() })
    const db = openTenant(dataDir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 200_000, everySeconds: 30 })
    db.close()
    tokens.push(store.createToken({ organisationId: org.id, name: 'process', createdAt: new Date().toISOString() }).token)
  }
  ;[paidToken, demoToken] = tokens as [string, string]
  store.close()
})
afterEach(() => cleanup())

const EXPORT = '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31'

/** An export whose reader starts paused, over a raw socket. */
async function pausedExport(base: string, token: string) {
  const url = new URL(base)
  const socket = connect({ host: url.hostname, port: Number(url.port) })
  await new Promise((resolve) => socket.once('connect', resolve))
  let text = ''
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')))
  socket.on('error', () => undefined)
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  socket.write(`GET ${EXPORT} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`)
  socket.pause()
  return { socket, closed, text: () => text }
}

describe('control store contention', () => {
  test('another process holding a write transaction for 2 s makes no request fail', async () => {
    const server = await startServerProcess({ DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '1000' })
    try {
      const holder = Bun.spawn(
        [process.execPath, '-e', `
          const { Database } = require('bun:sqlite')
          const db = new Database(${JSON.stringify(join(dataDir, 'control.sqlite'))})
          db.exec('BEGIN IMMEDIATE'); db.exec('UPDATE organisations SET name = name')
          console.log('locked')
          await Bun.sleep(2000)
          db.exec('COMMIT')
          console.log('released')`],
        { stdout: 'pipe' },
      )
      const reader = holder.stdout.getReader()
      await reader.read() // "locked"
      const lockedAt = Date.now()
      const get = (token: string, path = '/v1/queues') => fetch(`${server.base}${path}`, { headers: { Authorization: `Bearer ${token}` } })
      // Paid requests only read the control store: answered while the lock is held.
      const paid = await Promise.all(Array.from({ length: 20 }, () => get(paidToken)))
      expect(paid.map((r) => r.status)).toEqual(Array(20).fill(200))
      expect(Date.now() - lockedAt).toBeLessThan(1500)
      // Demo requests must write their quota: they wait for the lock (without blocking the paid ones), then pass.
      const demo = Promise.all(Array.from({ length: 5 }, () => get(demoToken)))
      const paidMeanwhile = await get(paidToken)
      expect(paidMeanwhile.status).toBe(200)
      expect((await demo).map((r) => r.status)).toEqual(Array(5).fill(200))
      await holder.exited
    } finally {
      await server.stop()
    }
  })
})

/** A server process with one export in flight whose reader never reads. */
async function serverWithStalledExport(env: Record<string, string>) {
  const server = await startServerProcess({ DATA_DIR: dataDir, ...env })
  const stalled = await pausedExport(server.base, paidToken)
  await eventually(() => server.output().includes('"event":"request"'), 5000, 'the export to start')
  return { server, stalled }
}

describe('graceful shutdown', () => {
  test('SIGTERM: stops accepting, lets a running export finish, closes everything, exits 0', async () => {
    const server = await startServerProcess({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_MS: '20000' })
    const running = await pausedExport(server.base, paidToken)
    await eventually(() => running.text().length > 0 || server.output().includes('"event":"request"'), 5000, 'the export to start')
    server.process.kill('SIGTERM')
    await eventually(() => server.output().includes('"worker":0,"event":"shutdown_started"'), 5000, 'the worker to start its drain')
    // For a moment new connections are still answered, each told to close (a keep-alive client
    // reconnects, to another worker when there is one, instead of finding its connection reset)...
    const meanwhile = await fetch(`${server.base}/healthz`)
    expect(meanwhile.status).toBe(200)
    expect(meanwhile.headers.get('connection')).toBe('close')
    // ...then none are accepted.
    await eventuallyAsync(async () => (await fetch(`${server.base}/healthz`).catch(() => null)) === null, 5000, 'the listener to close')
    // The export in flight completes, whole.
    running.socket.resume()
    await running.closed
    expect(running.text()).toMatch(/^HTTP\/1\.1 200/)
    expect(running.text().endsWith('\r\n0\r\n\r\n')).toBe(true)
    expect(await server.process.exited).toBe(0)
    expect(server.output()).toContain('shutdown_complete')
  }, 60_000)

  test('the drain timeout ends a stalled export, then the process exits 0', async () => {
    const { server, stalled } = await serverWithStalledExport({ SHUTDOWN_DRAIN_MS: '300', EXPORT_STALL_TIMEOUT_MS: '60000' })
    const started = Date.now()
    server.process.kill('SIGTERM')
    expect(await server.process.exited).toBe(0)
    expect(Date.now() - started).toBeLessThan(5000)
    // Logged as cut by the shutdown, not as a client that left.
    expect(server.output()).toMatch(/"event":"export_ended",[^\n]*"outcome":"shutdown"/)
    stalled.socket.destroy()
  }, 60_000)

  test('a second signal exits at once', async () => {
    const { server, stalled } = await serverWithStalledExport({ SHUTDOWN_DRAIN_MS: '60000' })
    server.process.kill('SIGTERM')
    await eventually(() => server.output().includes('shutdown_started'), 5000, 'the shutdown to start')
    const started = Date.now()
    server.process.kill('SIGINT')
    expect(await server.process.exited).toBe(1)
    expect(Date.now() - started).toBeLessThan(2000)
    stalled.socket.destroy()
  }, 60_000)
})
