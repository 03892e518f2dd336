import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { runAdmin } from '../../src/cli/admin.ts'
import { tenantDirectory, tenantFilePath } from '../../src/tenant/paths.ts'
import { isWellFormedToken, hashToken } from '../../src/auth/token.ts'
import { ControlStore } from '../../src/control/store.ts'
import { tempDataDir, openTenant } from '../support/harness.ts'

let dataDir: string
let cleanup: () => void
beforeEach(() => ({ dir: dataDir, cleanup } = tempDataDir()))
afterEach(() => cleanup())

const NOW = Date.parse('2026-03-10T12:00:00.000Z')

/** Runs the CLI in-process and captures what it wrote. */
function admin(...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const status = runAdmin(argv, { dataDir, now: NOW, out: (t) => (stdout += t), err: (t) => (stderr += t) })
  return { status, stdout, stderr, json: () => JSON.parse(stdout) }
}

function expectUsageError(result: ReturnType<typeof admin>, fragment: string) {
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).toContain(fragment)
}

describe('admin org', () => {
  test('create --json prints one document and creates the tenant file', () => {
    const result = admin('org', 'create', '--name', 'Café Nord', '--demo', '--json')
    expect(result.status).toBe(0)
    const org = result.json()
    expect(org).toMatchObject({ name: 'Café Nord', slug: 'cafe-nord', plan: 'demo', apiEnabled: true })
    expect(org.id).toMatch(/^org_[A-Za-z0-9]{16}$/)
    expect(existsSync(tenantFilePath(dataDir, org.id))).toBe(true)
    const db = openTenant(dataDir, org.id)
    expect(db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    expect(db.query('PRAGMA user_version').get()).toEqual({ user_version: 3 })
    db.close()
  })

  test('create with --slug and --api-disabled; list and update by slug or id', () => {
    const created = admin('org', 'create', '--name', 'Acme', '--slug', 'acme-eu', '--api-disabled', '--json').json()
    expect(created).toMatchObject({ slug: 'acme-eu', plan: 'paid', apiEnabled: false })
    const list = admin('org', 'list', '--json').json()
    expect(list.organisations.map((o: { id: string }) => o.id)).toEqual([created.id])
    expect(admin('org', 'update', 'acme-eu', '--api', 'enabled', '--plan', 'demo', '--json').json()).toMatchObject({ apiEnabled: true, plan: 'demo' })
    expect(admin('org', 'update', created.id, '--plan', 'paid', '--json').json()).toMatchObject({ plan: 'paid', apiEnabled: true })
    expect(admin('org', 'list').stdout).toContain('acme-eu')
  })

  test('wrong input exits 2 with one line and writes nothing', () => {
    admin('org', 'create', '--name', 'Taken', '--slug', 'taken')
    expectUsageError(admin('org', 'create', '--name', 'Again', '--slug', 'taken', '--json'), 'already taken')
    expectUsageError(admin('org', 'create', '--json'), '--name is required')
    expectUsageError(admin('org', 'create', '--name', 'Bad', '--slug', 'Not A Slug'), 'slug')
    expectUsageError(admin('org', 'create', '--name', 'X', '--colour', 'red'), 'colour')
    expectUsageError(admin('org', 'update', 'nobody', '--plan', 'paid'), 'unknown organisation')
    expectUsageError(admin('org', 'update', 'taken', '--plan', 'gold'), '--plan')
    expectUsageError(admin('org', 'update', 'taken', '--api', 'maybe'), '--api')
    expectUsageError(admin('org', 'explode'), 'unknown command')
    expectUsageError(admin(), 'command is required')
    expect(admin('org', 'list', '--json').json().organisations).toHaveLength(1)
    expect(readdirSync(tenantDirectory(dataDir)).filter((f) => f.endsWith('.sqlite'))).toHaveLength(1)
  })
})

describe('admin token', () => {
  test('create shows the token once; list never shows it; revoke twice succeeds and says so', () => {
    const org = admin('org', 'create', '--name', 'Tokens Inc', '--json').json()
    const created = admin('token', 'create', '--org', 'tokens-inc', '--name', 'warehouse loader', '--json').json()
    expect(created).toMatchObject({ name: 'warehouse loader', organisationId: org.id })
    expect(isWellFormedToken(created.token)).toBe(true)

    const listed = admin('token', 'list', '--org', org.id, '--json')
    expect(listed.stdout).not.toContain(created.token)
    expect(listed.stdout).not.toContain(hashToken(created.token))
    expect(listed.json().tokens).toMatchObject([{ id: created.id, name: 'warehouse loader', revokedAt: null, displayPrefix: created.token.slice(0, 8) }])

    const first = admin('token', 'revoke', created.id, '--json').json()
    expect(first).toMatchObject({ id: created.id, alreadyRevoked: false })
    const second = admin('token', 'revoke', created.id)
    expect(second.status).toBe(0)
    expect(second.stdout).toContain('already revoked')

    // Only the hash is stored.
    const store = new ControlStore(dataDir)
    const rows = store.db.query('SELECT * FROM api_tokens').all()
    store.close()
    expect(JSON.stringify(rows)).not.toContain(created.token)
    expect(JSON.stringify(rows)).toContain(hashToken(created.token))
  })

  test('wrong input exits 2 and creates no token', () => {
    admin('org', 'create', '--name', 'Solo')
    expectUsageError(admin('token', 'create', '--org', 'nobody', '--name', 'x'), 'unknown organisation')
    expectUsageError(admin('token', 'create', '--org', 'solo'), '--name is required')
    expectUsageError(admin('token', 'list'), '--org is required')
    expectUsageError(admin('token', 'revoke', 'tok_missing'), 'unknown token')
    expectUsageError(admin('token', 'revoke'), 'argument')
    expect(admin('token', 'list', '--org', 'solo', '--json').json().tokens).toEqual([])
  })
})

describe('admin seed', () => {
  test('fills a tenant deterministically, refuses to overwrite without --replace', () => {
    admin('org', 'create', '--name', 'Seeded', '--json')
    const first = admin('seed', '--org', 'seeded', '--days', '30', '--per-day', '200', '--seed', 'fixed', '--json').json()
    expect(first.tickets).toBeGreaterThan(2000)
    expect(first.locations).toBeGreaterThanOrEqual(2)
    expectUsageError(admin('seed', '--org', 'seeded', '--days', '30'), '--replace')
    const again = admin('seed', '--org', 'seeded', '--days', '30', '--per-day', '200', '--seed', 'fixed', '--replace', '--json').json()
    expect(again).toEqual(first)
    expectUsageError(admin('seed', '--org', 'seeded', '--days', 'many'), '--days')
    expectUsageError(admin('seed', '--org', 'nobody'), 'unknown organisation')
  })
})

describe('admin as a process', () => {
  const run = async (argv: string[], env: Record<string, string>) => {
    const proc = Bun.spawn([process.execPath, 'src/cli/admin.ts', ...argv], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, status] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { stdout, stderr, status }
  }

  test('org create --json prints exactly one JSON document', async () => {
    const { stdout, stderr, status } = await run(['org', 'create', '--name', 'Process Org', '--json'], { DATA_DIR: dataDir })
    expect(status).toBe(0)
    expect(stderr).toBe('')
    expect(JSON.parse(stdout)).toMatchObject({ name: 'Process Org', slug: 'process-org' })
  })

  test('an invalid configuration exits 2 with one line', async () => {
    const { stdout, stderr, status } = await run(['org', 'list'], { DATA_DIR: '' })
    expect(status).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain('DATA_DIR')
  })
})

test('data directory is private: 0700 directories, 0600 files', () => {
  dataDir = join(dataDir, 'fresh', 'data') // not there yet: the CLI creates it
  admin('org', 'create', '--name', 'Private', '--json')
  expect(statSync(dataDir).mode & 0o777).toBe(0o700)
  expect(statSync(tenantDirectory(dataDir)).mode & 0o777).toBe(0o700)
  const files = [join(dataDir, 'control.sqlite'), ...readdirSync(tenantDirectory(dataDir)).map((f) => join(tenantDirectory(dataDir), f))]
  for (const file of files) expect(statSync(file).mode & 0o777).toBe(0o600)
})
