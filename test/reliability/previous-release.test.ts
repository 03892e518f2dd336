import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openTenant } from '../support/harness.ts'
import { startServerProcess } from '../support/server-process.ts'

/**
 * docs/operations.md#upgrading, run: the previous release and this one take turns on one data
 * directory (upgrade, then rollback), and what a client holds stays valid across each change:
 * tokens, pagination cursors, changes tokens. The previous release is its commit's tree, taken
 * with `git archive` (nothing of the repository is changed) and run from source.
 */

/** The release this one follows. Move it forward when a release is made. */
const PREVIOUS_RELEASE = 'd4ff9ce'
const ROOT = join(import.meta.dir, '..', '..')
// The last 80 days (within the 90 a request may span), where the sample organisation's tickets are.
const TO = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
const FROM = new Date(Date.now() - 79 * 86_400_000).toISOString().slice(0, 10)

let work: string
let dataDir: string
const release = (root: string) => ({ argv: [process.execPath, join(root, 'src', 'main.ts')], cwd: root })
const previous = () => release(join(work, 'previous'))
const current = () => release(ROOT)

function admin(root: string, ...argv: string[]) {
  const run = Bun.spawnSync([process.execPath, join(root, 'src', 'cli', 'admin.ts'), ...argv], { cwd: root, env: { ...process.env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`admin ${argv.join(' ')}: ${run.stderr.toString()}`)
  return run.stdout.toString()
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'qa-api-releases-'))
  dataDir = join(work, 'data')
  const tree = join(work, 'previous')
  const archive = Bun.spawnSync(['sh', '-c', `mkdir -p "$1" && git -C "$2" archive "$3" | tar -x -C "$1"`, 'sh', tree, ROOT, PREVIOUS_RELEASE], { stderr: 'pipe' })
  if (archive.exitCode !== 0) throw new Error(`the previous release ${PREVIOUS_RELEASE} is not in this clone (a shallow one?): ${archive.stderr.toString()}`)
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface Held {
  token: string
  /** A page's nextCursor, and the page it leads to as the release that made it served it. */
  cursor: string
  nextPage: unknown
  changesToken: string
}

async function get(base: string, token: string, query: string) {
  const response = await fetch(`${base}/v1/tickets?from=${FROM}&to=${TO}&limit=20${query}`, { headers: { Authorization: `Bearer ${token}` } })
  expect({ query, status: response.status, body: response.status === 200 ? null : await response.text() }).toEqual({ query, status: 200, body: null })
  return { body: (await response.json()) as { items: { id: string; status: string }[]; nextCursor: string | null }, changesToken: response.headers.get('x-changes-token')! }
}

/** What a client of `base` holds after its first load: a token, a cursor with its next page, a changes token. */
async function holdings(base: string, token: string): Promise<Held> {
  const first = await get(base, token, '')
  expect(first.body.nextCursor).not.toBeNull()
  const next = await get(base, token, `&cursor=${encodeURIComponent(first.body.nextCursor!)}`)
  return { token, cursor: first.body.nextCursor!, nextPage: next.body, changesToken: first.changesToken }
}

/** The tenant file changes under the service, as the administration application changes it. */
function cancelOneTicket(): string {
  const org = JSON.parse(admin(ROOT, 'org', 'list', '--json')).organisations[0].id
  const db = openTenant(dataDir, org)
  try {
    const { id } = db.query("SELECT id FROM tickets WHERE status <> 'CANCELED' ORDER BY created_at DESC LIMIT 1").get() as { id: string }
    db.query("UPDATE tickets SET status = 'CANCELED', cancelled_at = ? WHERE id = ?").run(new Date().toISOString(), id)
    return id
  } finally {
    db.close()
  }
}

/** `held`, made by one release, used on `base`, served by another. */
async function expectStillValid(base: string, held: Held, changed: string) {
  expect((await fetch(`${base}/v1/queues`, { headers: { Authorization: `Bearer ${held.token}` } })).status).toBe(200)
  expect((await get(base, held.token, `&cursor=${encodeURIComponent(held.cursor)}`)).body).toEqual(held.nextPage as never)
  const changes = await get(base, held.token, `&changedAfter=${encodeURIComponent(held.changesToken)}`)
  expect(changes.body.items.map((ticket) => ticket.id)).toEqual([changed])
}

describe(`upgrade from ${PREVIOUS_RELEASE} and rollback to it`, () => {
  test('tokens, cursors and changes tokens of each release stay valid on the other', async () => {
    // The previous release makes the data directory (its first start's sample organisation) and a token.
    const before = await startServerProcess({ DATA_DIR: dataDir }, previous())
    const oldToken = JSON.parse(admin(join(work, 'previous'), 'token', 'create', '--org', 'sample', '--name', 'old', '--json')).token
    const heldFromPrevious = await holdings(before.base, oldToken)
    expect(await before.stop()).toBe(0)

    // Upgrade: stopped, migrated by the new release, started.
    const upgradeChanged = cancelOneTicket()
    admin(ROOT, 'migrate')
    const upgraded = await startServerProcess({ DATA_DIR: dataDir }, current())
    await expectStillValid(upgraded.base, heldFromPrevious, upgradeChanged)
    const newToken = JSON.parse(admin(ROOT, 'token', 'create', '--org', 'sample', '--name', 'new', '--json')).token
    const heldFromCurrent = await holdings(upgraded.base, newToken)
    expect(await upgraded.stop()).toBe(0)

    // Rollback: migrated back to the previous release's schema by this release, then the previous release started.
    const rollbackChanged = cancelOneTicket()
    admin(ROOT, 'migrate', '--to', '4')
    const rolledBack = await startServerProcess({ DATA_DIR: dataDir }, previous())
    await expectStillValid(rolledBack.base, heldFromCurrent, rollbackChanged)
    expect(await rolledBack.stop()).toBe(0)
  })
})
