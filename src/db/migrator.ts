import type { Database } from 'bun:sqlite'

/**
 * Schema migrations keyed on `PRAGMA user_version`: migration N (1-based) moves a file from
 * version N-1 to N. The tenant contract (docs/operations.md#schema-versions) names its version
 * by `user_version`, so the control store does too rather than keep drizzle-kit's journal table
 * (docs/decisions/0004-migrations-by-user-version.md).
 */
export interface Migration {
  description: string
  sql: string
  /**
   * Run inside the migration's transaction before its SQL: a reason not to apply it to this
   * file (its data would break what the migration promises), or undefined to go on.
   */
  refuseWhen?: (db: Database) => string | undefined
  /**
   * The step back from this version to the one before (`admin migrate --to N`), leaving the
   * file as the previous version made it. Undefined: there is no way back past this version.
   */
  down?: string
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

/** A file of a version this program has no migrations for: a newer release made it. */
export class NewerSchemaError extends Error {
  constructor(readonly version: number, readonly newest: number) {
    super(`schema version ${version} is newer than this program knows (${newest}); the release that made it can migrate it back (admin migrate --to ${newest})`)
    this.name = 'NewerSchemaError'
  }
}

/** A step down that has no inverse: the file stays at `version`. */
export class NoWayBackError extends Error {
  constructor(readonly version: number) {
    super(`schema version ${version} cannot be migrated down: it is the first this program knows`)
    this.name = 'NoWayBackError'
  }
}

/**
 * Applies the pending migrations up to `target` (the newest by default), or their inverses down
 * to it, each step in its own transaction. Returns the new version. Throws
 * MigrationRefusedError when a migration refuses the file; the steps before it stay applied.
 */
export function migrate(db: Database, migrations: readonly Migration[], target = migrations.length): number {
  if (!Number.isInteger(target) || target < 0 || target > migrations.length) throw new RangeError(`no schema version ${target}`)
  const current = schemaVersion(db)
  if (current > migrations.length) throw new NewerSchemaError(current, migrations.length)
  for (let version = current; version > target; version--) {
    const down = migrations[version - 1]!.down
    if (down === undefined) throw new NoWayBackError(version)
    db.transaction(() => {
      db.exec(down)
      db.exec(`PRAGMA user_version = ${version - 1}`)
    }).immediate()
  }
  for (let version = current + 1; version <= target; version++) {
    const migration = migrations[version - 1]!
    db.transaction(() => {
      const refusal = migration.refuseWhen?.(db)
      if (refusal !== undefined) throw new MigrationRefusedError(version - 1, refusal)
      db.exec(migration.sql)
      db.exec(`PRAGMA user_version = ${version}`)
    }).immediate()
  }
  return target
}
