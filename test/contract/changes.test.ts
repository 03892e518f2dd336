import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, renameSync, rmSync } from 'node:fs'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { standardTickets, writeStructure, writeTickets, type FixtureTicket } from '../support/fixtures.ts'
import { loadCsv, loadPages } from '../support/loader.ts'
import { openTenantForWriting } from '../../src/tenant/files.ts'
import { migrate } from '../../src/db/migrator.ts'
import { openWritableDatabase } from '../../src/db/files.ts'
import { TENANT_MIGRATIONS } from '../../src/tenant/migrations.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import type { ChangedAfterRefusal } from '../../src/contract/vocabulary.ts'

/** Change tracking over the real server (docs/api.md#loading-incrementally): the token, the filter, the errors. */

const RANGE = 'from=2026-03-01&to=2026-03-05'
const TOKEN_FORM = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
const OPERATIONS = [`/v1/tickets?${RANGE}`, `/v1/exports/tickets.csv?${RANGE}`]

let server: TestServer
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 1_000_000 })
})
afterAll(() => server.close())

/** An organisation with the standard fixture, and a writer connection to its file (the administration application). */
function organisation(tickets: FixtureTicket[] = standardTickets()) {
  const { org, token } = server.seeded({ tickets })
  const writer = openTenant(server.dataDir, org.id)
  return { org, apiToken: token, writer }
}

async function changesToken(apiToken: string, path = OPERATIONS[0]!): Promise<string> {
  const response = await server.get(path, apiToken)
  expect(response.status).toBe(200)
  await response.arrayBuffer()
  return response.headers.get('x-changes-token')!
}

const ids = (run: { rows: { id?: string }[] }) => run.rows.map((row) => row.id)

/** Both operations with changedAfter: the ids each returns, which must agree. */
async function changedIds(apiToken: string, token: string, query = RANGE): Promise<string[]> {
  const pages = await loadPages(server, apiToken, query, token, { limit: 2 })
  const csv = await loadCsv(server, apiToken, query, token)
  expect(ids(csv)).toEqual(ids(pages))
  return ids(pages) as string[]
}

/** Replaces an organisation's file with one at schema version 2 holding the standard fixture. */
function replaceWithVersion2File(orgId: string): void {
  const path = tenantFilePath(server.dataDir, orgId)
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
  const db = openWritableDatabase(path, 5000)
  migrate(db, TENANT_MIGRATIONS.slice(0, 2))
  writeStructure(db)
  writeTickets(db, standardTickets())
  db.close()
}

async function expectChangedAfterError(apiToken: string, token: string, message: RegExp, reason: ChangedAfterRefusal) {
  for (const path of OPERATIONS) {
    const response = await server.get(`${path}&changedAfter=${encodeURIComponent(token)}`, apiToken)
    expect({ path, status: response.status }).toEqual({ path, status: 400 })
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('x-changes-token')).toBeNull()
    const body = (await response.json()) as { error: string; param: string; message: string }
    expect(body).toMatchObject({ error: 'invalid_request', param: 'changedAfter', reason })
    expect(body.message).toMatch(message)
  }
  expect(server.app.pool.stats().leased).toBe(0) // the export's own connection was given back
}

describe('X-Changes-Token', () => {
  test('on every 200 of both ticket operations, not on /v1/queues; it moves only with a change', async () => {
    const { apiToken, writer } = organisation()
    const first = await changesToken(apiToken)
    expect(first).toMatch(TOKEN_FORM)
    expect(await changesToken(apiToken, OPERATIONS[1])).toBe(first)
    expect(await changesToken(apiToken, `/v1/tickets?${RANGE}&limit=1&status=WAITING`)).toBe(first)
    expect(await changesToken(apiToken, '/v1/tickets?from=2025-01-01&to=2025-01-02')).toBe(first) // an empty page too
    expect((await server.get('/v1/queues', apiToken)).headers.get('x-changes-token')).toBeNull()
    writer.exec(`UPDATE tickets SET notes = 'personal only' WHERE id = 't-001'`)
    expect(await changesToken(apiToken)).toBe(first)
    writer.exec(`UPDATE tickets SET status = 'COMPLETED' WHERE id = 't-005'`)
    const second = await changesToken(apiToken)
    expect(second).not.toBe(first)
    expect(await changesToken(apiToken, OPERATIONS[1])).toBe(second)
    writer.close()
  })

  test('a version-2 file sends none and answers changedAfter with 400 naming admin migrate; migrated while served, it sends one', async () => {
    const { org, apiToken, writer } = organisation()
    const token = await changesToken(apiToken)
    writer.close()
    replaceWithVersion2File(org.id)
    for (const path of OPERATIONS) {
      const response = await server.get(path, apiToken)
      expect(response.status).toBe(200)
      expect(response.headers.get('x-changes-token')).toBeNull()
      await response.arrayBuffer()
    }
    await expectChangedAfterError(apiToken, token, /not enabled.*schema version 2.*admin migrate.*without changedAfter/, 'not_tracked')

    // `admin migrate` (the same migration, through the same function) while the server holds the file open.
    openTenantForWriting(server.dataDir, org.id).close()
    const fresh = await changesToken(apiToken)
    expect(fresh).toMatch(TOKEN_FORM)
    expect(await changedIds(apiToken, fresh)).toEqual([])
  })
  test('a version-3 file whose history row was removed by hand: 503, never an answer without a token', async () => {
    const { org, apiToken, writer } = organisation()
    const token = await changesToken(apiToken)
    writer.exec('DELETE FROM change_history')
    for (const path of [...OPERATIONS, `${OPERATIONS[0]}&changedAfter=${token}`]) {
      const response = await server.get(path, apiToken)
      expect({ path, status: response.status }).toEqual({ path, status: 503 })
      const body = (await response.json()) as { error: string; message: string }
      expect(body.error).toBe('data_unavailable')
      expect(body.message).toContain('(its data file is damaged)')
    }
    expect(server.logger.lines.some((line) => line.includes('tenant_unavailable') && line.includes(org.id) && line.includes('history'))).toBe(true)
    writer.exec(`INSERT INTO change_history VALUES (1, 'restored-by-hand')`)
    expect(await changesToken(apiToken)).toMatch(TOKEN_FORM)
    writer.close()
  })
})

describe('changedAfter', () => {
  test('a personal-column change alone does not make a ticket appear; a status change does, an insert does, a delete makes it not appear', async () => {
    const { apiToken, writer } = organisation()
    const token = await changesToken(apiToken)
    expect(await changedIds(apiToken, token)).toEqual([])

    writer.exec(`UPDATE tickets SET customer_name = 'Someone Else', notes = 'moved', party_size = 4, bearer_hash = 'x' WHERE id = 't-002'`)
    expect(await changedIds(apiToken, token)).toEqual([])

    writer.exec(`UPDATE tickets SET status = 'CALLED', called_at = '2026-03-03T08:35:00.000Z', called_by_device_session_id = 'dev_1' WHERE id = 't-005'`)
    const afterStatus = await loadPages(server, apiToken, RANGE, token)
    expect(afterStatus.rows).toEqual([
      { id: 't-005', number: '2', queueId: 'q_zh', locationId: 'loc_b', status: 'CALLED', createdAt: '2026-03-03T08:30:00.000Z', calledAt: '2026-03-03T08:35:00.000Z', completedAt: '', cancelledAt: '', skippedAt: '', noShowAt: '', calledByDeviceSessionId: 'dev_1' },
    ])

    writeTickets(writer, [{ id: 't-100', number: 100, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-01T07:00:00.000Z' }])
    expect(await changedIds(apiToken, token)).toEqual(['t-100', 't-005'])

    writer.exec(`DELETE FROM tickets WHERE id IN ('t-100', 't-003')`)
    expect(await changedIds(apiToken, token)).toEqual(['t-005'])
    // The token of a later response starts after all of it.
    expect(await changedIds(apiToken, await changesToken(apiToken))).toEqual([])
    writer.close()
  })

  test('keeps the range, the filters, the order (createdAt, id) and the pagination', async () => {
    const { apiToken, writer } = organisation()
    const token = await changesToken(apiToken)
    writeTickets(writer, [
      { id: 't-000', number: 9, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-02T09:00:00.000Z' }, // ties with t-001, t-002
      { id: 't-out', number: 9, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-05T00:00:00.000Z' }, // `to` is exclusive
      { id: 't-early', number: 9, queueId: 'q_zh', locationId: 'loc_b', status: 'WAITING', createdAt: '2026-02-28T23:59:59.999Z' },
    ])
    // Changed in an order unlike (createdAt, id), so that the order of the result is the query's own.
    writer.exec(`UPDATE tickets SET status = 'COMPLETED', completed_at = '2026-03-03T09:00:00.000Z' WHERE id = 't-006'`)
    writer.exec(`UPDATE tickets SET number = 20 WHERE id = 't-002'`)
    writer.exec(`UPDATE tickets SET status = 'CANCELED', cancelled_at = '2026-03-02T10:30:00.000Z' WHERE id = 't-003'`)

    expect(await changedIds(apiToken, token)).toEqual(['t-000', 't-002', 't-003', 't-006'])
    const walk = await loadPages(server, apiToken, RANGE, token, { limit: 1 })
    expect(walk.requests).toBe(4)
    expect(await changedIds(apiToken, token, `${RANGE}&queueId=q_pay`)).toEqual(['t-000', 't-002'])
    expect(await changedIds(apiToken, token, `${RANGE}&queueId=q_pay&queueId=q_id`)).toEqual(['t-000', 't-002', 't-003'])
    expect(await changedIds(apiToken, token, `${RANGE}&locationId=loc_b`)).toEqual(['t-006'])
    expect(await changedIds(apiToken, token, `${RANGE}&status=CANCELED&status=COMPLETED`)).toEqual(['t-002', 't-003', 't-006'])
    expect(await changedIds(apiToken, token, `${RANGE}&locationId=loc_a&status=WAITING`)).toEqual(['t-000'])
    expect(await changedIds(apiToken, token, `from=2026-03-02T09:00:00Z&to=2026-03-02T10:00:00Z`)).toEqual(['t-000', 't-002'])
    expect(await changedIds(apiToken, token, `from=2026-02-01&to=2026-03-01`)).toEqual(['t-early'])
    writer.close()
  })

  test('a cursor is bound to changedAfter as to any filter', async () => {
    const { apiToken, writer } = organisation()
    const token = await changesToken(apiToken)
    writer.exec(`UPDATE tickets SET status = 'CANCELED' WHERE id IN ('t-001', 't-004', 't-005')`)
    const later = await changesToken(apiToken)
    const first = (await (await server.get(`/v1/tickets?${RANGE}&limit=1&changedAfter=${token}`, apiToken)).json()) as { nextCursor: string }
    const plain = (await (await server.get(`/v1/tickets?${RANGE}&limit=1`, apiToken)).json()) as { nextCursor: string }
    // The same token and query, another limit: accepted.
    expect((await server.get(`/v1/tickets?${RANGE}&limit=5&changedAfter=${token}&cursor=${first.nextCursor}`, apiToken)).status).toBe(200)
    for (const path of [
      `/v1/tickets?${RANGE}&limit=1&cursor=${first.nextCursor}`,
      `/v1/tickets?${RANGE}&limit=1&changedAfter=${later}&cursor=${first.nextCursor}`,
      `/v1/tickets?${RANGE}&limit=1&changedAfter=${token}&cursor=${plain.nextCursor}`,
    ]) {
      const response = await server.get(path, apiToken)
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ param: 'cursor' })
    }
    writer.close()
  })
})

describe('changedAfter errors: 400, param changedAfter, a message that says what to do', () => {
  test('malformed', async () => {
    const { apiToken, writer } = organisation()
    writer.close()
    for (const garbage of ['abc', 'a.b.c', '%00.x', 'x'.repeat(600)]) {
      await expectChangedAfterError(apiToken, garbage, /is not a changes token.*X-Changes-Token header of an earlier response/, 'malformed')
    }
  })

  test('altered', async () => {
    const { apiToken, writer } = organisation()
    writer.close()
    const token = await changesToken(apiToken)
    const [payload, signature] = token.split('.') as [string, string]
    const forged = Buffer.from(Buffer.from(payload, 'base64url').toString().replace(/,(\d+)\]$/, ',0]')).toString('base64url')
    await expectChangedAfterError(apiToken, `${forged}.${signature}`, /does not carry this service's signature.*unchanged/, 'altered')
    await expectChangedAfterError(apiToken, `${payload}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`, /signature/, 'altered')
  })

  test("another organisation's", async () => {
    const ours = organisation()
    const theirs = organisation()
    ours.writer.close()
    theirs.writer.close()
    await expectChangedAfterError(ours.apiToken, await changesToken(theirs.apiToken), /issued to another organisation.*without changedAfter/, 'other_organisation')
  })

  test('another history of the file: recreated, or restored from a copy (after the operator gave it a new history id)', async () => {
    const { org, apiToken, writer } = organisation()
    writer.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    const path = tenantFilePath(server.dataDir, org.id)
    copyFileSync(path, `${path}.backup`)
    const before = await changesToken(apiToken)
    writer.exec(`UPDATE tickets SET status = 'CANCELED' WHERE id = 't-005'`)
    writer.close()
    const after = await changesToken(apiToken)

    // Put back from the copy without a new history: the token of the later state is past the
    // file's versions, which is what a replica's lagging copy looks like: 503, never 400 (a
    // loader would reload the range from a copy that lacks rows).
    renameSync(`${path}.backup`, path)
    rmSync(`${path}-wal`, { force: true })
    rmSync(`${path}-shm`, { force: true })
    for (const operation of OPERATIONS) {
      const response = await server.get(`${operation}&changedAfter=${encodeURIComponent(after)}`, apiToken)
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('1')
      expect(((await response.json()) as { error: string }).error).toBe('copy_behind')
    }
    // A token from before the copy was made cannot be told apart, until the operator does as
    // docs/operations.md#backups says after a restore: a new history.
    expect(await changedIds(apiToken, before)).toEqual([])
    const restored = openTenant(server.dataDir, org.id)
    restored.exec('UPDATE change_history SET history_id = lower(hex(randomblob(16)))')
    restored.close()
    await expectChangedAfterError(apiToken, before, /earlier history.*recreated or restored.*load the range again without changedAfter/, 'other_history')
    await expectChangedAfterError(apiToken, after, /earlier history/, 'other_history')

    // Recreated: a new file, a new history; loading the range again gives a token that works.
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
    const recreated = openTenantForWriting(server.dataDir, org.id)
    writeStructure(recreated)
    writeTickets(recreated, standardTickets())
    recreated.close()
    const current = await changesToken(apiToken)
    await expectChangedAfterError(apiToken, before, /earlier history/, 'other_history')
    expect(await changedIds(apiToken, current)).toEqual([])
  })

  test('empty or given twice', async () => {
    const { apiToken, writer } = organisation()
    writer.close()
    const token = await changesToken(apiToken)
    for (const path of OPERATIONS) {
      for (const [extra, message] of [['&changedAfter=', /empty/], [`&changedAfter=${token}&changedAfter=${token}`, /only once/]] as const) {
        const response = await server.get(path + extra, apiToken)
        expect(response.status).toBe(400)
        const body = (await response.json()) as { param: string; message: string }
        expect(body.param).toBe('changedAfter')
        expect(body.message).toMatch(message)
      }
    }
  })
})
