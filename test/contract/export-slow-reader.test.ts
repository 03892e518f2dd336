import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, type TestServer } from '../support/harness.ts'
import { RawHttpClient, eventually } from '../support/raw-http.ts'

/**
 * The stall rule of an export is EXPORT_STALL_TIMEOUT_MS without progress, never the HTTP
 * server's idle timeout (docs/api.md#csv-export). Bun applies its idle timeout in ticks of about
 * 4 seconds, so the server here has an idle timeout of 1 s (cut at about 4 s) and a stall
 * timeout well above that: a reader that pauses 5 s outlasts the first and not the second.
 */
describe('an export whose reader pauses, over real TCP', () => {
  let server: TestServer
  let token: string
  const path = '/v1/exports/tickets.csv?from=2026-01-01&to=2026-03-31'

  beforeAll(async () => {
    server = await startServer({ rateLimitPerMinute: 100_000, exportStallTimeoutMs: 7000 }, { idleTimeoutSeconds: 1 })
    token = server.seeded({ bulk: { count: 100_000 } }).token // about 12 MB of CSV: far more than the sockets buffer
  })
  afterAll(() => server.close())

  test('a reader pausing longer than the idle timeout gets the whole file; one that never resumes ends stalled', async () => {
    const expected = Buffer.from(await (await server.get(path, token)).arrayBuffer())
    const headers = { Authorization: `Bearer ${token}` }
    const pausing = await RawHttpClient.get(server.base, path, headers, { paused: true })
    const gone = await RawHttpClient.get(server.base, path, headers, { paused: true })
    await eventually(() => server.app.pool.stats().leased === 2, 5000, 'both exports to start')
    await Bun.sleep(5000) // longer than the server's idle timeout (1 s, applied at the next 4-second tick)
    expect(server.logger.lines.filter((l) => l.includes('export_ended') && l.includes('"cancelled"'))).toEqual([])
    pausing.resume()
    await eventually(() => pausing.endedCleanly(), 15_000, 'the paused reader to get the whole file')
    expect(pausing.body().equals(expected)).toBe(true)

    // The other one took nothing for EXPORT_STALL_TIMEOUT_MS: stalled, its statement and lease released.
    await eventually(() => server.logger.lines.some((l) => l.includes('export_ended') && l.includes('"stalled"')), 15_000, 'the stalled export')
    await eventually(() => server.app.pool.stats().leased === 0, 5000, 'the stalled export to be released')
    gone.resume()
    await gone.closed
    expect(gone.endedCleanly()).toBe(false)

    // The finished export's connection is kept alive, and closed again when idle: the idle
    // timeout was given back before its last byte.
    await pausing.closed
  }, 40_000)

  test('a HEAD of the export leaves its kept-alive connection with the idle timeout: closed when idle', async () => {
    const head = await RawHttpClient.get(server.base, path, { Authorization: `Bearer ${token}` }, { method: 'HEAD' })
    await eventually(() => head.text().includes('\r\n\r\n'), 5000, 'the HEAD answer')
    expect(head.text()).toStartWith('HTTP/1.1 200')
    await eventually(() => server.logger.lines.some((l) => l.includes('export_ended') && l.includes('"cancelled"')), 5000, 'the export to end')
    // Closed by the server at its next idle tick (1 s, applied every ~4 s), not kept for ever.
    const closedByServer = await Promise.race([head.closed.then(() => true), Bun.sleep(12_000).then(() => false)])
    head.destroy()
    expect(closedByServer).toBe(true)
  }, 30_000)
})
