import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { renameSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../../src/control/store.ts'
import { CursorCodec } from '../../src/tickets/cursor.ts'
import { parseTicketQuery } from '../../src/tickets/query.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { startServer, tempDataDir, type TestServer } from '../support/harness.ts'
import { copyDataDirForReplica } from '../support/replica-copy.ts'
import { startLaggingPair, type LaggingPair } from '../support/lagging-copy.ts'
import { queryDuckDb } from '../support/duckdb-query.ts'

/**
 * A replica's copy lags the writer's file (docs/api.md#errors, copy_behind): a changes token or
 * a cursor made from a fresher copy is answered 503 with Retry-After on a copy that has not
 * reached it, never with fewer rows; the copy replaced by a fresher one (atomic rename) is
 * served from the next request, with no 5xx while it is swapped.
 */

const RANGE = 'from=2026-01-01&to=2026-01-03'
let pair: LaggingPair
let fresh: TestServer
let lagging: TestServer
let laggingDir: { dir: string; cleanup: () => void }
let orgId: string
let apiToken: string

beforeAll(async () => {
  // The replica's copy is taken after 300 tickets; the writer goes on writing 300 more into the same history.
  pair = await startLaggingPair(300, 300)
  ;({ fresh, lagging, laggingDir, orgId, token: apiToken } = pair)
})

afterAll(() => pair?.close())

async function expectCopyBehind(response: Response) {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe('1')
  const body = (await response.json()) as { error: string; message: string }
  expect(body.error).toBe('copy_behind')
  expect(body.message).toMatch(/has not yet reached.*retry after Retry-After/)
}

async function firstPage(server: TestServer, query = RANGE) {
  const response = await server.get(`/v1/tickets?${query}&limit=100`, apiToken)
  expect(response.status).toBe(200)
  const page = (await response.json()) as { items: { id: string }[]; nextCursor: string }
  return { page, token: response.headers.get('x-changes-token')! }
}

/** Replaces the lagging copy's tenant file with a fresh copy, as the restore does: a new file, renamed over. */
let refreshes = 0
function refreshLaggingCopy(): void {
  const staged = join(laggingDir.dir, `staged-${++refreshes}`)
  copyDataDirForReplica(fresh.dataDir, staged)
  renameSync(join(staged, 'orgs', `${orgId}.sqlite`), tenantFilePath(laggingDir.dir, orgId))
}

describe('a copy that lags', () => {
  test('a changes token of a later point of the same history: 503 copy_behind on both operations', async () => {
    const { token } = await firstPage(fresh)
    for (const path of [`/v1/tickets?${RANGE}`, `/v1/exports/tickets.csv?${RANGE}`]) {
      await expectCopyBehind(await lagging.get(`${path}&changedAfter=${encodeURIComponent(token)}`, apiToken))
    }
  })

  test('a cursor of a page read on a fresher copy: 503 copy_behind, not a short page', async () => {
    // Replicas' cursors carry the point their page was read at; the fresher one is a replica too.
    const freshDir = tempDataDir()
    copyDataDirForReplica(fresh.dataDir, freshDir.dir)
    const freshReplica = await startServer({ rateLimitPerMinute: 1_000_000, readOnly: true }, { dataDir: freshDir.dir })
    const { page } = await firstPage(freshReplica).finally(async () => {
      await freshReplica.close()
      freshDir.cleanup()
    })
    await expectCopyBehind(await lagging.get(`/v1/tickets?${RANGE}&limit=100&cursor=${encodeURIComponent(page.nextCursor)}`, apiToken))
    // The lagging copy's own cursors still walk it.
    const own = await firstPage(lagging)
    expect((await lagging.get(`/v1/tickets?${RANGE}&cursor=${encodeURIComponent(own.page.nextCursor)}`, apiToken)).status).toBe(200)
  })

  test('X-Changes-Floor on every /v1 route: a page, an export or the places of a copy behind the token a loader holds is 503 copy_behind; at or past it, served; a header that is no token of ours is 400', async () => {
    const { token } = await firstPage(fresh)
    for (const path of [`/v1/tickets?${RANGE}`, `/v1/exports/tickets.csv?${RANGE}`, '/v1/queues']) {
      await expectCopyBehind(await lagging.get(path, apiToken, { 'X-Changes-Floor': token }))
      expect((await fresh.get(path, apiToken, { 'X-Changes-Floor': token })).status).toBe(200)
      const own = (await firstPage(lagging)).token
      expect((await lagging.get(path, apiToken, { 'X-Changes-Floor': own })).status).toBe(200)
      const wrong = await lagging.get(path, apiToken, { 'X-Changes-Floor': 'not-a-token' })
      expect(wrong.status).toBe(400)
      expect(((await wrong.json()) as { message: string }).message).toContain('X-Changes-Floor')
    }
  })

  test('sync through a balancer that moves to a lagging copy: its reconcile is held to the kept token (503, retried, exit 1), the mirror keeps every row', async () => {
    const upstream = fresh.base
    let exportsTo = fresh.base
    const balancer = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const url = new URL(request.url)
        const headers = new Headers(request.headers)
        headers.delete('accept-encoding')
        // Round robin, as it may fall: pages (sync's check of its stored token) from one copy,
        // the export's windows from another.
        const to = url.pathname === '/v1/exports/tickets.csv' ? exportsTo : upstream
        const answer = await fetch(`${to}${url.pathname}${url.search}`, { headers })
        const passed = new Headers(answer.headers)
        passed.delete('content-encoding')
        passed.delete('content-length')
        return new Response(answer.body, { status: answer.status, headers: passed })
      },
    })
    const dir = tempDataDir()
    const file = join(dir.dir, 'mirror.duckdb')
    const sync = async (...args: string[]) => {
      const child = Bun.spawn([process.execPath, 'src/sync/cli.ts', '--url', `http://127.0.0.1:${balancer.port}`, '--into', file, ...args], {
        cwd: join(import.meta.dir, '../..'),
        env: { ...process.env, API_TOKEN: apiToken },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [stderr, status] = await Promise.all([new Response(child.stderr).text(), child.exited])
      return { stderr, status }
    }
    const count = async () => Number((await queryDuckDb(file, 'SELECT count(*) AS n FROM tickets'))[0]!.n)
    try {
      expect((await sync('--since', '2025-12-01')).status).toBe(0)
      const mirrored = await count()
      expect(mirrored).toBe(600)
      exportsTo = lagging.base // the balancer sends the windows to a replica 300 tickets behind
      const reconcile = await sync('--reconcile')
      expect(reconcile.status).toBe(1)
      expect(reconcile.stderr).toContain('copy')
      expect(await count()).toBe(mirrored)
    } finally {
      balancer.stop(true)
      dir.cleanup()
    }
  }, 60_000)

  test("a writer's cursors keep the two fields every earlier release reads (a rollback keeps walks going)", async () => {
    const { page } = await firstPage(fresh)
    const payload = JSON.parse(Buffer.from(page.nextCursor.split('.')[0]!, 'base64url').toString())
    expect(payload).toHaveLength(2)
  })

  test('a cursor made before cursors carried the point (two fields) is still accepted', async () => {
    const store = new ControlStore(laggingDir.dir, { readOnly: true })
    const codec = new CursorCodec(store.cursorSigningKey())
    store.close()
    const query = parseTicketQuery(new URLSearchParams(RANGE), 'page')
    const old = codec.encode(orgId, query, { createdAt: '2026-01-01T00:10:00.000Z', id: 't0000010' })
    const response = await lagging.get(`/v1/tickets?${RANGE}&cursor=${encodeURIComponent(old)}`, apiToken)
    expect(response.status).toBe(200)
    expect(((await response.json()) as { items: { id: string }[] }).items[0]!.id).toBe('t0000011')
  })

  test('replaced by a fresher copy: served from the next request, no 5xx while swapping, then equal to the fresh one', async () => {
    const { token: behindToken } = await firstPage(lagging)
    let swapping = true
    const statuses: number[] = []
    const load = (async () => {
      while (swapping) {
        const response = await lagging.get(`/v1/tickets?${RANGE}&limit=500&changedAfter=${encodeURIComponent(behindToken)}`, apiToken)
        await response.arrayBuffer()
        statuses.push(response.status)
      }
    })()
    try {
      for (let i = 0; i < 5; i++) {
        refreshLaggingCopy()
        await Bun.sleep(20)
      }
    } finally {
      swapping = false
      await load
    }
    expect(statuses.length).toBeGreaterThan(5)
    expect(statuses.filter((status) => status !== 200)).toEqual([])

    const { token, page } = await firstPage(fresh)
    expect((await lagging.get(`/v1/tickets?${RANGE}&limit=100&cursor=${encodeURIComponent(page.nextCursor)}`, apiToken)).status).toBe(200)
    const walked: string[] = []
    let cursor: string | null = null
    do {
      const response = await lagging.get(`/v1/tickets?${RANGE}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, apiToken)
      expect(response.status).toBe(200)
      const body = (await response.json()) as { items: { id: string }[]; nextCursor: string | null }
      walked.push(...body.items.map((item) => item.id))
      cursor = body.nextCursor
    } while (cursor)
    expect(walked).toHaveLength(600)
    expect((await lagging.get(`/v1/tickets?${RANGE}&changedAfter=${encodeURIComponent(token)}`, apiToken)).status).toBe(200)
    const tenant = new Database(tenantFilePath(laggingDir.dir, orgId), { readonly: true })
    expect((tenant.query('SELECT count(*) AS n FROM tickets').get() as { n: number }).n).toBe(600)
    tenant.close()
  })
})
