import { describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { adminOnFreshDataDir } from '../support/admin-cli.ts'
import { openTenant } from '../support/harness.ts'
import { TENANT_MIGRATIONS, TENANT_SCHEMA_VERSION } from '../../src/tenant/migrations.ts'
import { migrate, NoWayBackError, schemaVersion } from '../../src/db/migrator.ts'
import { openWritableDatabase } from '../../src/db/files.ts'

/**
 * `admin migrate --to N`: every version's step has its inverse. A file taken down to each older
 * version holds exactly the schema a file migrated up to that version holds, the same rows, and
 * passes SQLite's integrity check; brought up again, it is a newest-version file again.
 */

const NOW = Date.parse('2026-03-10T12:00:00.000Z')
const fresh = adminOnFreshDataDir(NOW)
const { admin } = fresh

/** The schema as SQLite keeps it: every table, index and trigger with its statement (SQLite's own tables left out). */
function schemaOf(db: Database) {
  return db.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all()
}

/** The schema of a new file migrated up to `version`. */
function schemaAt(version: number) {
  const db = openWritableDatabase(join(fresh.dataDir, `reference-${version}.sqlite`), 1000)
  try {
    migrate(db, TENANT_MIGRATIONS, version)
    return schemaOf(db)
  } finally {
    db.close()
  }
}

/** Every row of the contract's tables, in id order; `locations.time_zone` apart (version 5 adds it, its step back drops it). */
function rowsOf(db: Database) {
  const rows = Object.fromEntries(['locations', 'queues', 'device_sessions', 'tickets'].map((table) => [table, db.query(`SELECT * FROM ${table} ORDER BY id`).all() as Record<string, unknown>[]]))
  const zones = rows.locations!.map(({ time_zone }) => time_zone ?? null)
  rows.locations = rows.locations!.map(({ time_zone: _, ...rest }) => rest)
  return { tables: rows, zones }
}

function inspect(organisationId: string) {
  const db = openTenant(fresh.dataDir, organisationId)
  try {
    return {
      version: schemaVersion(db),
      integrity: db.query('PRAGMA integrity_check').all(),
      schema: schemaOf(db),
      rows: rowsOf(db),
      triggers: (db.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger'").get() as { n: number }).n,
    }
  } finally {
    db.close()
  }
}

describe('admin migrate --to N', () => {
  test('down one version at a time to 1 and up again: integrity_check ok, the same rows, each version\'s schema exactly', () => {
    const org = admin('org', 'create', '--name', 'Round Trip', '--json').json()
    expect(admin('seed', '--org', org.id, '--days', '3', '--per-day', '40').status).toBe(0)
    const before = inspect(org.id)
    expect(before.version).toBe(TENANT_SCHEMA_VERSION)
    expect(before.rows.tables.tickets!.length).toBeGreaterThan(50)
    expect(before.triggers).toBeGreaterThan(3)
    expect(before.rows.zones.every((zone) => typeof zone === 'string' && zone.startsWith('Europe/'))).toBe(true)
    const historyBefore = openTenant(fresh.dataDir, org.id).query('SELECT history_id FROM change_history').get()

    for (let version = TENANT_SCHEMA_VERSION - 1; version >= 1; version--) {
      const step = admin('migrate', '--to', String(version), '--json')
      expect(step.status).toBe(0)
      expect(step.json().tenants).toEqual([{ organisationId: org.id, slug: 'round-trip', from: version + 1, to: version, created: false }])
      const now = inspect(org.id)
      expect({ version, integrity: now.integrity }).toEqual({ version, integrity: [{ integrity_check: 'ok' }] })
      expect({ version, schema: now.schema }).toEqual({ version, schema: schemaAt(version) })
      // Below version 5 the zones are gone with their column; every other value is kept.
      expect(now.rows).toEqual({ tables: before.rows.tables, zones: version >= 5 ? before.rows.zones : before.rows.zones.map(() => null) })
    }
    expect(inspect(org.id).triggers).toBe(0) // version 1: the contract's schema alone

    const up = admin('migrate')
    expect(up.status).toBe(0)
    expect(up.stdout).toContain(`${org.id} (round-trip): version 1 → ${TENANT_SCHEMA_VERSION}`)
    const after = inspect(org.id)
    expect(after.integrity).toEqual([{ integrity_check: 'ok' }])
    expect(after.schema).toEqual(before.schema)
    // Brought up again, no location's zone is known: the administration application writes them anew.
    expect(after.rows).toEqual({ tables: before.rows.tables, zones: before.rows.zones.map(() => null) })
    expect(after.triggers).toBe(before.triggers)

    // The triggers work again: the value rules refuse a bad row, the change log records a change,
    // and the change history is a new one (tokens of the old one are refused: loaders reload).
    const db = openTenant(fresh.dataDir, org.id)
    try {
      expect(() => db.exec(`UPDATE tickets SET created_at = 'yesterday' WHERE rowid = 1`)).toThrow('tenant contract')
      // A change whatever the seeded row holds (setting a status it may already have logs nothing).
      db.exec(`UPDATE tickets SET number = number + 1 WHERE rowid = 1`)
      expect(db.query('SELECT count(*) AS n FROM ticket_changes').get()).toEqual({ n: 1 })
      expect(db.query('SELECT history_id FROM change_history').get()).not.toEqual(historyBefore)
      expect(() => db.exec(`UPDATE locations SET time_zone = 'IST'`)).toThrow('tenant contract: locations.time_zone')
    } finally {
      db.close()
    }
  })

  test('several versions in one run, and a file already there left alone', () => {
    const org = admin('org', 'create', '--name', 'Jump', '--json').json()
    expect(admin('migrate', '--to', '2').stdout).toContain(`${org.id} (jump): version ${TENANT_SCHEMA_VERSION} → 2`)
    expect(admin('migrate', '--to', '2').stdout).toContain(`${org.id} (jump): already current (version 2)`)
    expect(inspect(org.id).schema).toEqual(schemaAt(2))
    expect(admin('migrate', '--to', '3').stdout).toContain(`${org.id} (jump): version 2 → 3`)
    expect(inspect(org.id).schema).toEqual(schemaAt(3))
  })

  test('a version this build does not have: one line, exit 2, nothing changed', () => {
    const org = admin('org', 'create', '--name', 'Bounds', '--json').json()
    for (const to of ['0', String(TENANT_SCHEMA_VERSION + 1), 'two', '-1']) {
      expect(admin('migrate', '--to', to)).toMatchObject({ status: 2, stdout: '', stderr: `admin: --to must be a whole number from 1 to ${TENANT_SCHEMA_VERSION}\n` })
    }
    expect(inspect(org.id).version).toBe(TENANT_SCHEMA_VERSION)
  })

  test('version 1 has no step back: it is the administration application\'s schema', () => {
    const db = openWritableDatabase(join(fresh.dataDir, 'one.sqlite'), 1000)
    try {
      migrate(db, TENANT_MIGRATIONS, 1)
      expect(() => migrate(db, TENANT_MIGRATIONS, 0)).toThrow(NoWayBackError)
      expect(schemaVersion(db)).toBe(1)
    } finally {
      db.close()
    }
  })
})
