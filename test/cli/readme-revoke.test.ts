import { afterEach, beforeEach, expect, test } from 'bun:test'
import { shellSnippet } from '../support/doc-snippet.ts'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { tempDataDir } from '../support/harness.ts'

let dataDir: string
let cleanup: () => void
beforeEach(() => ({ dir: dataDir, cleanup } = tempDataDir()))
afterEach(() => cleanup())

test('the README revoke snippet revokes the token named in it, not the oldest one', async () => {
  const store = new ControlStore(dataDir)
  const org = createOrganisationWithTenant(store, { name: 'Café Nord', plan: 'paid', apiEnabled: true, now: Date.now() })
  // An older token first, so that the list's first entry is not the one the snippet means.
  const older = store.createToken({ organisationId: org.id, name: 'dashboard', createdAt: '2026-01-01T00:00:00.000Z' }).record
  const loader = store.createToken({ organisationId: org.id, name: 'warehouse loader', createdAt: '2026-02-01T00:00:00.000Z' }).record
  store.close()

  const run = Bun.spawn(['bash', '-euo', 'pipefail', '-c', shellSnippet('README.md', 'To revoke\nthe token just made')], { env: { ...process.env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, status] = [await new Response(run.stdout).text(), await new Response(run.stderr).text(), await run.exited]
  expect({ status, stderr }).toEqual({ status: 0, stderr: '' })
  expect(stdout).toBe(`revoked token ${loader.id}\n`)

  const after = new ControlStore(dataDir)
  expect(after.findToken(loader.id)!.revokedAt).not.toBeNull()
  expect(after.findToken(older.id)!.revokedAt).toBeNull()
  after.close()
})
