import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startServer, openTenant, tempDataDir, type TestServer } from '../support/harness.ts'
import { writeBulkTickets } from '../support/fixtures.ts'
import { copyDataDirForReplica } from '../support/replica-copy.ts'
import { redisForFile } from '../support/redis-server.ts'

/**
 * A copy that lags answers 503 copy_behind, which is the server's own failing: it consumes
 * neither the token's minute window nor a demo organisation's day (decisions §26, docs/api.md),
 * with the embedded limits and with Redis's, and the headers of the 503 show the limits without it.
 */
const RANGE = 'from=2026-01-01&to=2026-01-03'
const LIMITS = { rateLimitPerMinute: 10, demoDailyQuota: 20 }
const redis = redisForFile()
let fresh: TestServer
let demoToken: string
let orgId: string
const copies: { cleanup: () => void }[] = []

beforeAll(async () => {
  fresh = await startServer({ rateLimitPerMinute: 1_000_000, demoDailyQuota: 1_000_000 })
  const seeded = fresh.seeded({ plan: 'demo', bulk: { count: 50, start: '2026-01-01', everySeconds: 60 } })
  orgId = seeded.org.id
  demoToken = seeded.token
})

afterAll(async () => {
  await fresh?.close()
  for (const copy of copies) copy.cleanup()
})

/** A copy taken now, served (its own writable control.sqlite keeps the embedded quota); the writer then writes on. */
async function laggingServer(overrides: Record<string, unknown>): Promise<TestServer> {
  const copy = tempDataDir()
  copies.push(copy)
  copyDataDirForReplica(fresh.dataDir, copy.dir)
  return startServer({ ...LIMITS, ...overrides }, { dataDir: copy.dir })
}

/** What is left of the minute and the day; not the seconds to midnight, which may tick between two answers. */
function limitsOf(response: Response) {
  return { window: response.headers.get('x-ratelimit-remaining'), rateLimit: response.headers.get('ratelimit')?.replace(/("day";r=\d+;t=)\d+/, '$1…') }
}

const engines = [
  { name: 'embedded (memory window, control.sqlite quota)', overrides: () => ({}), skip: false },
  { name: 'Redis', overrides: () => ({ redisUrl: redis.url }), skip: !redis.available },
]

for (const engine of engines) {
  describe.skipIf(engine.skip)(`copy_behind costs the client nothing: ${engine.name}`, () => {
    let lagging: TestServer
    beforeAll(async () => {
      lagging = await laggingServer(engine.overrides())
      const writer = openTenant(fresh.dataDir, orgId)
      writeBulkTickets(writer, { count: 20, idPrefix: `later-${engine.skip}-${Math.random()}`, start: '2026-01-01T00:00:30Z', everySeconds: 60 })
      writer.close()
    })
    afterAll(() => lagging?.close())

    test('four copy_behind answers (changedAfter, X-Changes-Floor, an export) leave the window and the day as they were', async () => {
      const token = (await fresh.get(`/v1/tickets?${RANGE}&limit=1`, demoToken)).headers.get('x-changes-token')!
      const before = await lagging.get(`/v1/tickets?${RANGE}&limit=1`, demoToken)
      expect(before.status).toBe(200)
      const counted = limitsOf(before)
      expect(counted.window).toBe('9')
      expect(counted.rateLimit).toContain('"day";r=19')
      // One after another: each 503's headers then show exactly the state before it.
      const behind = [
        () => lagging.get(`/v1/tickets?${RANGE}&changedAfter=${encodeURIComponent(token)}`, demoToken),
        () => lagging.get(`/v1/tickets?${RANGE}`, demoToken, { 'X-Changes-Floor': token }),
        () => lagging.get(`/v1/exports/tickets.csv?${RANGE}`, demoToken, { 'X-Changes-Floor': token }),
        () => lagging.get(`/v1/exports/tickets.csv?${RANGE}&changedAfter=${encodeURIComponent(token)}`, demoToken),
      ]
      for (const ask of behind) {
        const response = await ask()
        expect(response.status).toBe(503)
        expect(((await response.json()) as { error: string }).error).toBe('copy_behind')
        expect(response.headers.get('retry-after')).toBe('1')
        // The 503's own headers show the limits without it.
        expect(limitsOf(response)).toEqual(counted)
      }
      const after = await lagging.get(`/v1/tickets?${RANGE}&limit=1`, demoToken)
      expect(after.status).toBe(200)
      expect(after.headers.get('x-ratelimit-remaining')).toBe('8')
      expect(after.headers.get('ratelimit')).toContain('"day";r=18')
    })

    test('other errors after admission still count (a 400 of the query is the client\'s)', async () => {
      const first = limitsOf(await lagging.get(`/v1/tickets?${RANGE}&limit=1`, demoToken))
      const refused = await lagging.get(`/v1/tickets?${RANGE}&limit=0`, demoToken)
      expect(refused.status).toBe(400)
      expect(Number(refused.headers.get('x-ratelimit-remaining'))).toBe(Number(first.window) - 1)
    })
  })
}
