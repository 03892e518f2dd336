import { describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { adminOnFreshDataDir } from '../support/admin-cli.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { TENANT_MIGRATIONS, TENANT_SCHEMA_VERSION } from '../../src/tenant/migrations.ts'
import { migrate, schemaVersion } from '../../src/db/migrator.ts'
import { openTenant } from '../support/harness.ts'
import { writeLocationZones, writeStructure, writeTickets } from '../support/fixtures.ts'

const NOW = Date.parse('2026-03-10T12:00:00.000Z')

const fresh = adminOnFreshDataDir(NOW)
const { admin } = fresh

const ticket = (id: string, number = 1) => ({ id, number, queueId: 'q_pay', locationId: 'loc_a', status: 'WAITING', createdAt: '2026-03-01T08:00:00.000Z' })

/**
 * An organisation whose file is at version 3 (written before the value rules existed), with
 * good rows and the bad ones of the hardening trial: a BLOB instant, text and a 2^53+1 in
 * `number`, a NUL in a name, an empty id.
 */
function olderFileWithBadRows(): { id: string; slug: string } {
  const org = admin('org', 'create', '--name', 'Older', '--json').json()
  rmSync(tenantFilePath(fresh.dataDir, org.id))
  const db = openTenant(fresh.dataDir, org.id)
  migrate(db, TENANT_MIGRATIONS.slice(0, 3))
  writeStructure(db)
  writeTickets(db, [ticket('t_good'), ticket('t_blob'), ticket('t_text'), ticket('t_big'), ticket('')])
  db.exec(`UPDATE tickets SET called_at = x'00ff' WHERE id = 't_blob'`)
  db.exec(`UPDATE tickets SET number = 'abc' WHERE id = 't_text'`)
  db.query(`UPDATE tickets SET number = ? WHERE id = 't_big'`).run(9_007_199_254_740_993n)
  db.exec(`UPDATE locations SET name = 'Amsterdam' || char(0) || 'Centraal' WHERE id = 'loc_a'`)
  db.close()
  return org
}

describe('admin check', () => {
  test('lists the rows of an older file that break the contract, exit 1', () => {
    const org = olderFileWithBadRows()
    const result = admin('check', '--org', org.slug)
    expect(result.status).toBe(1)
    expect(result.stderr).toBe('')
    const lines = result.stdout.trim().split('\n')
    expect(lines[0]).toBe(`${org.id} (older): schema version 3; 5 row(s) break the tenant contract, and the API answers 503 data_unavailable rather than serve them:`)
    expect(lines.slice(1, -1)).toEqual([
      expect.stringMatching(/^ {2}locations rowid \d+ \(id "loc_a"\): locations\.name must be a text without NUL characters$/),
      expect.stringMatching(/^ {2}tickets rowid \d+ \(id "t_blob"\): tickets\.called_at must be a UTC instant written YYYY-MM-DDTHH:MM:SS\.sssZ or NULL$/),
      expect.stringMatching(/^ {2}tickets rowid \d+ \(id "t_text"\): tickets\.number must be an integer from 0 to 2147483647$/),
      expect.stringMatching(/^ {2}tickets rowid \d+ \(id "t_big"\): tickets\.number must be an integer from 0 to 2147483647$/),
      expect.stringMatching(/^ {2}tickets rowid \d+ \(no usable id\): tickets\.id must be a non-empty text without NUL characters$/),
    ])
    expect(lines.at(-1)).toContain('then run `admin migrate`')
  })

  test('--json: one document with every row, --limit bounds the list but not the count', () => {
    const org = olderFileWithBadRows()
    const result = admin('check', '--org', org.id, '--limit', '2', '--json')
    expect(result.status).toBe(1)
    const report = result.json()
    expect(report).toMatchObject({ organisationId: org.id, slug: 'older', schemaVersion: 3, count: 5 })
    expect(report.rows).toHaveLength(2)
    expect(report.rows[1]).toEqual({ table: 'tickets', rowid: expect.any(Number), id: 't_blob', columns: ['called_at'], rules: [expect.stringContaining('tickets.called_at')] })
  })

  test("a location's time zone that no one knows (the triggers check its form only) is listed, exit 1", () => {
    const org = admin('org', 'create', '--name', 'Zoned', '--json').json()
    const db = openTenant(fresh.dataDir, org.id)
    writeStructure(db)
    writeLocationZones(db, { loc_a: 'Europe/Atlantis', loc_a2: 'Asia/Calcutta', loc_b: 'Etc/GMT+5' })
    db.close()
    const result = admin('check', '--org', 'zoned', '--json')
    expect(result.status).toBe(1)
    expect(result.json()).toMatchObject({ count: 1, rows: [{ table: 'locations', id: 'loc_a', columns: ['time_zone'], rules: [expect.stringContaining('locations.time_zone must be an IANA time zone name')] }] })
  })

  test('a clean file: exit 0 and says so', () => {
    const org = admin('org', 'create', '--name', 'Clean', '--json').json()
    const db = openTenant(fresh.dataDir, org.id)
    writeStructure(db)
    writeTickets(db, [ticket('t_1')])
    db.close()
    const result = admin('check', '--org', 'clean')
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(`${org.id} (clean): schema version ${TENANT_SCHEMA_VERSION}; every row holds to the tenant contract\n`)
    expect(admin('check', '--org', 'clean', '--json').json()).toEqual({ organisationId: org.id, slug: 'clean', schemaVersion: TENANT_SCHEMA_VERSION, count: 0, rows: [] })
  })

  test('wrong input: unknown organisation, no --org, a bad --limit, a missing file (exit 2)', () => {
    expect(admin('check', '--org', 'nope')).toMatchObject({ status: 2, stdout: '', stderr: 'admin: unknown organisation "nope"\n' })
    expect(admin('check')).toMatchObject({ status: 2, stderr: 'admin: --org is required\n' })
    const org = admin('org', 'create', '--name', 'Gone', '--json').json()
    expect(admin('check', '--org', 'gone', '--limit', '0')).toMatchObject({ status: 2, stderr: 'admin: --limit must be a whole number from 1 to 100000\n' })
    rmSync(tenantFilePath(fresh.dataDir, org.id))
    expect(admin('check', '--org', 'gone')).toMatchObject({ status: 2, stderr: 'admin: organisation "gone" has no tenant file; `admin migrate` creates an empty one\n' })
  })
})

describe('version 4 and the rows already there', () => {
  test('admin migrate leaves a file with bad rows at version 3, says why, exits 1; once they are fixed it migrates', () => {
    const org = olderFileWithBadRows()
    const result = admin('migrate')
    expect(result.status).toBe(1)
    expect(result.stdout).toContain(`${org.id} (older): already current (version 3); stopped short of version 4: 5 row(s) break the tenant contract; \`admin check --org older\` lists them`)
    expect(result.stdout).toContain('0 tenant file(s) changed, 1 already current, 1 not at the newest version')
    expect(admin('migrate', '--json').json().tenants[0]).toMatchObject({ from: 3, to: 3, refused: expect.stringContaining('5 row(s)') })

    const db = openTenant(fresh.dataDir, org.id)
    db.exec(`DELETE FROM tickets WHERE id <> 't_good'; UPDATE locations SET name = 'Amsterdam Centraal' WHERE id = 'loc_a'`)
    db.close()
    expect(admin('migrate')).toMatchObject({ status: 0 })
    const migrated = openTenant(fresh.dataDir, org.id)
    expect(schemaVersion(migrated)).toBe(TENANT_SCHEMA_VERSION)
    expect(() => migrated.exec(`UPDATE tickets SET called_at = x'00ff'`)).toThrow('tenant contract: tickets.called_at')
    migrated.close()
  })

  test('admin seed --replace over a file with bad rows replaces them and brings it to version 4', () => {
    const org = olderFileWithBadRows()
    expect(admin('seed', '--org', org.slug, '--days', '2', '--per-day', '20', '--replace')).toMatchObject({ status: 0 })
    const db = openTenant(fresh.dataDir, org.id)
    expect(schemaVersion(db)).toBe(TENANT_SCHEMA_VERSION)
    // The file had no time_zone column when the data was generated: the zones came after.
    expect(db.query('SELECT count(*) AS n FROM locations WHERE time_zone IS NULL').get()).toEqual({ n: 0 })
    db.close()
    expect(admin('check', '--org', org.slug)).toMatchObject({ status: 0 })
  })

  test('admin seed --replace starts a new change history', () => {
    const org = admin('org', 'create', '--name', 'Seeded', '--json').json()
    const historyId = () => {
      const db = openTenant(fresh.dataDir, org.id)
      const { history_id } = db.query('SELECT history_id FROM change_history').get() as { history_id: string }
      db.close()
      return history_id
    }
    admin('seed', '--org', 'seeded', '--days', '2', '--per-day', '20')
    const first = historyId()
    expect(admin('seed', '--org', 'seeded', '--days', '2', '--per-day', '20', '--replace')).toMatchObject({ status: 0 })
    expect(historyId()).not.toBe(first)
    expect(historyId()).toMatch(/^[0-9a-f]{32}$/)
  })
})
