import type { Database } from 'bun:sqlite'

/**
 * Schema migrations keyed on `PRAGMA user_version`: migration N (1-based) moves a file from
 * version N-1 to N. The tenant contract (docs/operations.md#schema-versions) names the schema version by
 * `user_version`, so the control store uses the same mechanism rather than drizzle-kit's
 * journal table: one way to migrate, and a tenant file carries no table of ours for it.
 */
export interface Migration {
  description: string
  sql: string
}

export function schemaVersion(db: Database): number {
  const row = db.query('PRAGMA user_version').get() as { user_version: number }
  return row.user_version
}

/** Applies the pending migrations, each in its own transaction. Returns the new version. */
export function migrate(db: Database, migrations: readonly Migration[]): number {
  const current = schemaVersion(db)
  if (current > migrations.length) {
    throw new Error(`schema version ${current} is newer than this program knows (${migrations.length})`)
  }
  for (let version = current + 1; version <= migrations.length; version++) {
    const migration = migrations[version - 1]!
    db.transaction(() => {
      db.exec(migration.sql)
      db.exec(`PRAGMA user_version = ${version}`)
    }).immediate()
  }
  return migrations.length
}
