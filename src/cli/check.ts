import { constants, Database } from 'bun:sqlite'
import { openOwnFile } from '../db/trusted-directory.ts'
import { existsSync } from 'node:fs'
import type { Organisation } from '../control/store.ts'
import { schemaVersion } from '../db/migrator.ts'
import { scanBreaches, type StoredBreach } from '../tenant/row-check.ts'
import { hasContractTriggers } from '../tenant/migrations.ts'
import { tenantFilePath } from '../tenant/paths.ts'
import { UsageError } from './args.ts'

/**
 * `admin check --org <org>`: the rows of the organisation's tenant file that break the
 * contract's value rules (docs/operations.md#what-a-row-must-hold), which the API refuses to
 * serve (503). Read-only: the file is neither created nor migrated. Status 1 when rows are found.
 */
export function checkTenantFile(dataDir: string, org: Organisation, limit: number) {
  const path = tenantFilePath(dataDir, org.id)
  if (!existsSync(path)) throw new UsageError(`organisation "${org.slug}" has no tenant file; \`admin migrate\` creates an empty one`)
  const db = openOwnFile(path, () => new Database(path, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_NOFOLLOW))
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    const version = schemaVersion(db)
    const { count, rows } = scanBreaches(db, limit)
    const name = `${org.id} (${org.slug})`
    const text =
      count === 0
        ? [`${name}: schema version ${version}; every row holds to the tenant contract`]
        : [
            `${name}: schema version ${version}; ${count} row(s) break the tenant contract, and the API answers 503 data_unavailable rather than serve them:`,
            ...rows.map(rowLine),
            ...(count > rows.length ? [`  … and ${count - rows.length} more (--limit ${Math.min(count, 100_000)} lists more)`] : []),
            hasContractTriggers(version)
              ? 'Correct or delete these rows (this file\'s triggers refuse such rows now: they were written around them).'
              : 'Correct or delete these rows, then run `admin migrate`: version 4 refuses such rows when they are written.',
          ]
    return {
      json: { organisationId: org.id, slug: org.slug, schemaVersion: version, count, rows },
      text,
      status: count === 0 ? 0 : 1,
    }
  } finally {
    db.close()
  }
}

function rowLine(row: StoredBreach): string {
  const id = row.id === null ? 'no usable id' : `id ${JSON.stringify(row.id)}`
  return `  ${row.table} rowid ${row.rowid} (${id}): ${row.rules.join('; ')}`
}
