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
  /**
   * Run inside the migration's transaction before its SQL: a reason not to apply it to this
   * file (its data would break what the migration promises), or undefined to go on.
   */
  refuseWhen?: (db: Database) => string | undefined
}

/** A migration refused a file: it stays at `version`, the last one applied. */
export class MigrationRefusedError extends Error {
  constructor(readonly version: number, readonly reason: string) {
    super(`schema version ${version + 1} not applied: ${reason}`)
    this.name = 'MigrationRefusedError'
  }
}

export function schemaVersion(db: Database): number {
  const row = db.query('PRAGMA user_version').get() as { user_version: number }
  return row.user_version
}

/**
 * Applies the pending migrations, each in its own transaction. Returns the new version. Throws
 * MigrationRefusedError when a migration refuses the file; the ones before it stay applied.
 */
export function migrate(db: Database, migrations: readonly Migration[]): number {
  const current = schemaVersion(db)
  if (current > migrations.length) {
    throw new Error(`schema version ${current} is newer than this program knows (${migrations.length})`)
  }
  for (let version = current + 1; version <= migrations.length; version++) {
    const migration = migrations[version - 1]!
    db.transaction(() => {
      const refusal = migration.refuseWhen?.(db)
      if (refusal !== undefined) throw new MigrationRefusedError(version - 1, refusal)
      db.exec(migration.sql)
      db.exec(`PRAGMA user_version = ${version}`)
    }).immediate()
  }
  return migrations.length
}
