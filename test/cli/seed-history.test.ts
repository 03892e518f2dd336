import { afterEach, beforeEach, expect, test } from 'bun:test'
import { runAdmin } from '../../src/cli/admin.ts'
import { startServer, type TestServer } from '../support/harness.ts'

let server: TestServer
beforeEach(async () => (server = await startServer()))
afterEach(() => server.close())

const NOW = Date.parse('2026-03-10T12:00:00.000Z')
const RANGE = 'from=2026-03-01T00:00:00Z&to=2026-03-11T00:00:00Z'

function admin(...argv: string[]): number {
  return runAdmin(argv, { dataDir: server.dataDir, now: NOW, out: () => {}, err: (text) => process.stderr.write(text) })
}

test('admin seed --replace starts a new change history: a loader\'s token is refused with the message that says to load again', async () => {
  const { org, token } = server.organisation()
  expect(admin('seed', '--org', org.id, '--days', '5', '--per-day', '50')).toBe(0)
  const first = await server.get(`/v1/tickets?${RANGE}&limit=1`, token)
  expect(first.status).toBe(200)
  const changesToken = first.headers.get('x-changes-token')!
  expect(changesToken).toBeTruthy()
  // Unchanged data: the token is good.
  expect((await server.get(`/v1/tickets?${RANGE}&changedAfter=${changesToken}`, token)).status).toBe(200)

  expect(admin('seed', '--org', org.id, '--days', '5', '--per-day', '50', '--seed', 'other', '--replace')).toBe(0)
  const refused = await server.get(`/v1/tickets?${RANGE}&changedAfter=${changesToken}`, token)
  expect(refused.status).toBe(400)
  const body = (await refused.json()) as { error: string; param: string; message: string }
  expect(body).toMatchObject({ error: 'invalid_request', param: 'changedAfter' })
  expect(body.message).toContain('load the range again without changedAfter')
  // The loader's reload: without changedAfter, a new token of the new history.
  const reload = await server.get(`/v1/tickets?${RANGE}&limit=1`, token)
  expect(reload.status).toBe(200)
  expect(reload.headers.get('x-changes-token')).not.toBe(changesToken)
})
