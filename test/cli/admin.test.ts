import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { adminOnFreshDataDir, type AdminRun } from '../support/admin-cli.ts'
import { tenantDirectory, tenantFilePath } from '../../src/tenant/paths.ts'
import { isWellFormedToken, hashToken } from '../../src/auth/token.ts'
import { ControlStore } from '../../src/control/store.ts'
import { openTenant } from '../support/harness.ts'
import { TENANT_MIGRATIONS, TENANT_SCHEMA_VERSION } from '../../src/tenant/migrations.ts'
import { migrate } from '../../src/db/migrator.ts'

const NOW = Date.parse('2026-03-10T12:00:00.000Z')

const fresh = adminOnFreshDataDir(NOW)
const { admin } = fresh

/** Exit 2, nothing on stdout, one line on stderr; with --json that line is one JSON document. */
function expectUsageError(result: AdminRun, fragment: string) {
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.trim().split('\n')).toHaveLength(1)
  expect(result.stderr).toContain(fragment)
  if (result.argv.includes('--json')) {
    const error = JSON.parse(result.stderr)
    expect(Object.keys(error)).toEqual(['error', 'message'])
    expect(error.error).toBe('usage')
    expect(error.message).toContain(fragment)
  } else expect(result.stderr).toStartWith('admin: ')
}

describe('admin org', () => {
  test('create --json prints one document and creates the tenant file', () => {
    const result = admin('org', 'create', '--name', 'Café Nord', '--demo', '--json')
    expect(result.status).toBe(0)
    const org = result.json()
    expect(org).toMatchObject({ name: 'Café Nord', slug: 'cafe-nord', plan: 'demo', apiEnabled: true })
    expect(org.id).toMatch(/^org_[A-Za-z0-9]{16}$/)
    expect(existsSync(tenantFilePath(fresh.dataDir, org.id))).toBe(true)
    const db = openTenant(fresh.dataDir, org.id)
    expect(db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    expect(db.query('PRAGMA user_version').get()).toEqual({ user_version: TENANT_SCHEMA_VERSION })
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
    expect(readdirSync(tenantDirectory(fresh.dataDir)).filter((f) => f.endsWith('.sqlite'))).toHaveLength(1)
  })

  test('the slug rule holds wherever an organisation is made: the CLI and the store alike', () => {
    expectUsageError(admin('org', 'create', '--name', 'Bad', '--slug', 'org_x'), 'slug "org_x" must be lower-case letters, digits and dashes (at most 63)')
    expectUsageError(admin('org', 'create', '--name', '!!!'), 'slug "" must be lower-case letters')
    const store = new ControlStore(fresh.dataDir)
    try {
      const input = { name: 'Direct', plan: 'paid' as const, apiEnabled: true, createdAt: new Date(NOW).toISOString() }
      expect(() => store.createOrganisation({ ...input, slug: 'Has Spaces' })).toThrow('slug "Has Spaces" must be lower-case letters')
      expect(() => store.createOrganisation({ ...input, slug: 'x'.repeat(64) })).toThrow('must be lower-case letters, digits and dashes (at most 63)')
      expect(store.createOrganisation({ ...input, slug: 'direct-1' }).slug).toBe('direct-1')
      expect(() => store.createOrganisation({ ...input, slug: 'direct-1' })).toThrow('slug "direct-1" is already taken')
    } finally {
      store.close()
    }
    expect(existsSync(tenantDirectory(fresh.dataDir))).toBe(false) // nothing made for a refused slug
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
    const store = new ControlStore(fresh.dataDir)
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
    expectUsageError(admin('token', 'revoke'), 'token revoke needs the token id (tok_…); `admin token list --org <org>` shows them')
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

describe('admin messages that tell the operator what to do', () => {
  test('a negative number is taken as a value and refused by its range, not called ambiguous', () => {
    admin('org', 'create', '--name', 'Ranges')
    expectUsageError(admin('seed', '--org', 'ranges', '--per-day', '-5'), '--per-day must be a whole number from 1 to 1000000')
    expectUsageError(admin('seed', '--org', 'ranges', '--days', '-1', '--json'), '--days must be a whole number from 1 to 3660')
    expectUsageError(admin('seed', '--org', 'ranges', '--per-day', '0'), '--per-day must be a whole number from 1 to 1000000')
    expect(openTenant(fresh.dataDir, admin('org', 'list', '--json').json().organisations[0].id).query('SELECT count(*) AS n FROM tickets').get()).toEqual({ n: 0 })
  })

  test('option mistakes name the option and the fix', () => {
    admin('org', 'create', '--name', 'Opts')
    expectUsageError(admin('token', 'create', '--org', 'opts', '--name'), '--name needs a value')
    expectUsageError(admin('token', 'create', '--org', 'opts', '--name', '--json'), '--name needs a value')
    expectUsageError(admin('org', 'list', '--json=yes'), '--json takes no value')
    expectUsageError(admin('org', 'list', '--colour'), 'unknown option "--colour" (admin --help lists the options of each command)')
    expectUsageError(admin('org', 'list', 'extra'), 'unexpected argument "extra"')
    expectUsageError(admin('org', 'update', 'opts', 'extra', '--plan', 'paid'), 'unexpected argument "extra"')
    expectUsageError(admin('org', 'update', '--plan', 'paid'), "org update needs the organisation's id or slug; `admin org list` shows them")
    expectUsageError(admin('tokens', 'list'), 'unknown command "tokens list" (admin --help lists the commands)')
  })

  test('org update without --plan or --api is refused, and changes nothing', () => {
    const before = admin('org', 'create', '--name', 'Unchanged', '--demo', '--json').json()
    expectUsageError(admin('org', 'update', 'unchanged'), 'nothing to change: give --plan and/or --api')
    expectUsageError(admin('org', 'update', 'unchanged', '--json'), 'nothing to change: give --plan and/or --api')
    expect(admin('org', 'list', '--json').json().organisations).toEqual([before])
  })

  test('token revoke given the token itself points to its id and never echoes the token', () => {
    admin('org', 'create', '--name', 'Secrets')
    const created = admin('token', 'create', '--org', 'secrets', '--name', 'leaked', '--json').json()
    const known = admin('token', 'revoke', created.token, '--json')
    expectUsageError(known, `token revoke takes the token's id, not the token itself: run \`admin token revoke ${created.id}\``)
    expect(known.stderr).not.toContain(created.token)
    const unknown = 'svc_' + 'x'.repeat(38)
    const notOurs = admin('token', 'revoke', unknown)
    expectUsageError(notOurs, "token revoke takes the token's id (tok_…), not the token itself (svc_…); `admin token list --org <org>` shows the ids")
    expect(notOurs.stderr).not.toContain(unknown)
    expect(admin('token', 'list', '--org', 'secrets', '--json').json().tokens[0].revokedAt).toBeNull()
  })

  test('text token list shows when each token was created', () => {
    admin('org', 'create', '--name', 'Listed')
    const created = admin('token', 'create', '--org', 'listed', '--name', 'loader', '--json').json()
    const line = admin('token', 'list', '--org', 'listed').stdout.trim()
    expect(line).toContain(`${created.id}  svc_`)
    expect(line).toContain(`created ${new Date(NOW).toISOString()}`)
    expect(line).toContain('active  last used never  loader')
  })

  test('--help shows the form it was invoked in and explains --per-day', () => {
    const help = admin('--help')
    expect(help.status).toBe(0)
    // In-process, outside npm's `admin` script: as Bun on the file (test/cli/help.test.ts has npm's form).
    expect(help.stdout).toStartWith('usage: bun src/cli/admin.ts <command> [options]')
    expect(help.stdout).toContain('--per-day N    seed: tickets generated per day')
    expect(admin('seed', '--help').stdout).toBe(help.stdout)
  })
})

describe('admin migrate', () => {
  test('reports per file what moved from which version to which, or that it was already current', () => {
    const first = admin('migrate', '--json').json() // a data directory without control.sqlite yet
    expect(first).toEqual({ controlStore: { from: 0, to: 1 }, tenants: [] })
    const current = admin('org', 'create', '--name', 'Current', '--json').json()
    const old = admin('org', 'create', '--name', 'Old', '--json').json()
    // A file as the administration application writes it: the contract schema, version 1.
    rmSync(tenantFilePath(fresh.dataDir, old.id))
    const db = openTenant(fresh.dataDir, old.id)
    migrate(db, TENANT_MIGRATIONS.slice(0, 1))
    db.close()
    const newest = TENANT_SCHEMA_VERSION

    // Both were created at the same instant, so the listing follows their (random) ids.
    const byId = <T extends { id: string }>(list: T[]) => [...list].sort((a, b) => (a.id < b.id ? -1 : 1))
    const text = admin('migrate')
    expect(text.status).toBe(0)
    expect(text.stdout.trim().split('\n')).toEqual([
      'control store: already current (version 1)',
      ...byId([current, old]).map((o) => (o === old ? `${old.id} (old): version 1 → ${newest}` : `${current.id} (current): already current (version ${newest})`)),
      '1 tenant file(s) changed, 1 already current',
    ])
    const upgraded = openTenant(fresh.dataDir, old.id)
    expect(upgraded.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND name LIKE 'tickets_%_created'").get()).toEqual({ n: 3 })
    upgraded.close()

    expect(admin('migrate', '--json').json()).toEqual({
      controlStore: { from: 1, to: 1 },
      tenants: byId([current, old]).map((o) => ({ organisationId: o.id, slug: o.slug, from: newest, to: newest, created: false })),
    })
  })

  test('a missing tenant file is created at the newest version, and said so', () => {
    const org = admin('org', 'create', '--name', 'Lost', '--json').json()
    rmSync(tenantFilePath(fresh.dataDir, org.id))
    expect(admin('migrate').stdout).toContain(`${org.id} (lost): file was missing; created at version ${TENANT_SCHEMA_VERSION}`)
    expect(admin('migrate', '--json').json().tenants).toEqual([{ organisationId: org.id, slug: 'lost', from: TENANT_SCHEMA_VERSION, to: TENANT_SCHEMA_VERSION, created: false }])
  })

  test('a tenant file newer than this program is left as it is and named; the others are migrated; exit 1', () => {
    const org = admin('org', 'create', '--name', 'Future', '--json').json()
    const other = admin('org', 'create', '--name', 'Older', '--json').json()
    const db = openTenant(fresh.dataDir, org.id)
    db.exec('PRAGMA user_version = 99')
    db.close()
    const older = openTenant(fresh.dataDir, other.id)
    migrate(older, TENANT_MIGRATIONS, 2)
    older.close()
    const newer = `schema version 99 is newer than this program knows (${TENANT_SCHEMA_VERSION}); the release that made it can migrate it back (admin migrate --to ${TENANT_SCHEMA_VERSION})`
    const result = admin('migrate', '--json')
    expect(result.status).toBe(1)
    expect(result.json().tenants).toContainEqual({ organisationId: org.id, slug: 'future', from: 99, to: 99, created: false, newer })
    expect(result.json().tenants).toContainEqual({ organisationId: other.id, slug: 'older', from: 2, to: TENANT_SCHEMA_VERSION, created: false })
    const text = admin('migrate')
    expect(text.stdout).toContain(`${org.id} (future): ${newer}\n`)
    expect(text.stdout).toContain('0 tenant file(s) changed, 1 already current, 1 not at the newest version')
  })
})

describe('admin as a process', () => {
  const run = async (argv: string[], env: Record<string, string>) => {
    const proc = Bun.spawn([process.execPath, 'src/cli/admin.ts', ...argv], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, status] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { stdout, stderr, status }
  }

  test('org create --json prints exactly one JSON document', async () => {
    const { stdout, stderr, status } = await run(['org', 'create', '--name', 'Process Org', '--json'], { DATA_DIR: fresh.dataDir })
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

  test('an invalid configuration with --json is one JSON document on stderr', async () => {
    const { stdout, stderr, status } = await run(['org', 'list', '--json'], { DATA_DIR: '' })
    expect(status).toBe(2)
    expect(stdout).toBe('')
    expect(JSON.parse(stderr)).toEqual({ error: 'configuration', message: 'DATA_DIR must not be empty' })
  })
})

/**
 * The documented form, run as a new user would after `npm install`: in a shell, through npm,
 * without node_modules/.bin on the PATH (npm adds it for its scripts) and without the npm_*
 * variables of an outer `npm test`.
 */
describe('admin through `npm run -s admin --` in a real shell', () => {
  const root = join(import.meta.dir, '..', '..')
  const shell = async (command: string) => {
    const env: Record<string, string> = { DATA_DIR: fresh.dataDir }
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('npm_') && key !== 'DATA_DIR') env[key] = value
    env.PATH = (process.env.PATH ?? '').split(':').filter((dir) => !dir.includes('node_modules')).join(':')
    const proc = Bun.spawn(['bash', '-c', command], { cwd: root, env, stdout: 'pipe', stderr: 'pipe' })
    const [stdout, stderr, status] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    return { stdout, stderr, status }
  }

  test('org create --json: stdout is exactly one JSON document', async () => {
    const { stdout, stderr, status } = await shell("npm run -s admin -- org create --name 'Shell Org' --json")
    expect(stderr).toBe('')
    expect(status).toBe(0)
    expect(stdout.endsWith('}\n')).toBe(true)
    expect(JSON.parse(stdout)).toMatchObject({ name: 'Shell Org', slug: 'shell-org', plan: 'paid', apiEnabled: true })
    expect(admin('org', 'list', '--json').json().organisations).toHaveLength(1)
  })

  test('a wrong call with --json: exit 2, nothing on stdout, one JSON document on stderr', async () => {
    const { stdout, stderr, status } = await shell('npm run -s admin -- token revoke --json')
    expect(status).toBe(2)
    expect(stdout).toBe('')
    expect(JSON.parse(stderr)).toEqual({ error: 'usage', message: 'token revoke needs the token id (tok_…); `admin token list --org <org>` shows them' })
  })
})

test('data directory is private: 0700 directories, 0600 files', () => {
  fresh.dataDir = join(fresh.dataDir, 'fresh', 'data') // not there yet: the CLI creates it
  admin('org', 'create', '--name', 'Private', '--json')
  expect(statSync(fresh.dataDir).mode & 0o777).toBe(0o700)
  expect(statSync(tenantDirectory(fresh.dataDir)).mode & 0o777).toBe(0o700)
  const files = [join(fresh.dataDir, 'control.sqlite'), ...readdirSync(tenantDirectory(fresh.dataDir)).map((f) => join(tenantDirectory(fresh.dataDir), f))]
  for (const file of files) expect(statSync(file).mode & 0o777).toBe(0o600)
})
