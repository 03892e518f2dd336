import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { adminOnFreshDataDir } from '../support/admin-cli.ts'
import { startServerProcess } from '../support/server-process.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'

/** `admin org delete <org> --yes`: the organisation, its tokens and its file go; a copy of the file stays. */

const fresh = adminOnFreshDataDir(Date.parse('2026-11-28T10:00:00Z'))
const { admin } = fresh

function organisationWithToken(name: string) {
  const org = admin('org', 'create', '--name', name, '--json').json()
  expect(admin('seed', '--org', org.slug, '--days', '3', '--per-day', '20').status).toBe(0)
  const token = admin('token', 'create', '--org', org.slug, '--name', 'loader', '--json').json()
  return { org, token }
}

const tickets = (path: string) => {
  const db = new Database(path, { readonly: true })
  try {
    return (db.query('SELECT count(*) AS n FROM tickets').get() as { n: number }).n
  } finally {
    db.close()
  }
}

describe('admin org delete', () => {
  test('without --yes: one line saying what it would remove, exit 2, nothing changed', () => {
    const { org } = organisationWithToken('Kept')
    const refused = admin('org', 'delete', 'kept')
    expect({ status: refused.status, stdout: refused.stdout }).toEqual({ status: 2, stdout: '' })
    expect(refused.stderr).toBe(`admin: org delete removes organisation ${org.id} (kept), its 1 token(s) and its tenant file (a copy is kept under deleted/): add --yes to do it\n`)
    expect(admin('org', 'list', '--json').json().organisations).toHaveLength(1)
    expect(admin('token', 'list', '--org', 'kept', '--json').json().tokens).toHaveLength(1)
    expect(existsSync(tenantFilePath(fresh.dataDir, org.id))).toBe(true)
    expect(existsSync(join(fresh.dataDir, 'deleted'))).toBe(false)
  })

  test('--yes: the organisation, its tokens and its file are gone; the copy under deleted/ holds every ticket, private', () => {
    const { org } = organisationWithToken('Gone')
    const other = organisationWithToken('Other')
    const source = tenantFilePath(fresh.dataDir, org.id)
    const before = tickets(source)
    const deleted = admin('org', 'delete', 'gone', '--yes', '--json')
    expect(deleted.stderr).toBe('')
    expect(deleted.status).toBe(0)
    const backup = `deleted/${org.id}-2026-11-28T10-00-00-000Z.sqlite`
    expect(deleted.json()).toEqual({ organisationId: org.id, slug: 'gone', tokens: 1, backup })
    expect(admin('org', 'list', '--json').json().organisations.map((o: { slug: string }) => o.slug)).toEqual(['other'])
    expect(admin('token', 'list', '--org', 'gone').stderr).toBe('admin: unknown organisation "gone"\n')
    for (const file of [source, `${source}-wal`, `${source}-shm`]) expect(existsSync(file)).toBe(false)
    expect(tickets(join(fresh.dataDir, backup))).toBe(before)
    expect(statSync(join(fresh.dataDir, backup)).mode & 0o777).toBe(0o600)
    expect(statSync(join(fresh.dataDir, 'deleted')).mode & 0o777).toBe(0o700)
    // The other organisation is untouched.
    expect(admin('token', 'list', '--org', 'other', '--json').json().tokens).toHaveLength(1)
    expect(existsSync(tenantFilePath(fresh.dataDir, other.org.id))).toBe(true)
  })

  test('an organisation without a tenant file: deleted, no copy; an unknown one or none named: exit 2', () => {
    const org = admin('org', 'create', '--name', 'Bare', '--json').json()
    rmSync(tenantFilePath(fresh.dataDir, org.id))
    const deleted = admin('org', 'delete', org.id, '--yes')
    expect(deleted.stdout).toBe(`deleted organisation ${org.id} (bare) and its 0 token(s); it had no tenant file\n`)
    expect(existsSync(join(fresh.dataDir, 'deleted'))).toBe(false)
    expect(admin('org', 'delete', 'bare', '--yes')).toMatchObject({ status: 2, stderr: 'admin: unknown organisation "bare"\n' })
    expect(admin('org', 'delete', '--yes')).toMatchObject({ status: 2, stderr: "admin: org delete needs the organisation's id or slug; `admin org list` shows them\n" })
  })

  test('while the server runs: the organisation\'s token answers 200, then 401 from the next request', async () => {
    const { token } = organisationWithToken('Served')
    const server = await startServerProcess({ DATA_DIR: fresh.dataDir })
    try {
      const ask = () => fetch(`${server.base}/v1/queues`, { headers: { Authorization: `Bearer ${token.token}` } })
      expect((await ask()).status).toBe(200)
      expect(admin('org', 'delete', 'served', '--yes').status).toBe(0)
      expect((await ask()).status).toBe(401)
      expect(readdirSync(join(fresh.dataDir, 'deleted'))).toHaveLength(1)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })
})
