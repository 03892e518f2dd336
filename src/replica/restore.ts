import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { replicaUrlOf, replicatedFiles } from './litestream-config.ts'
import { isValidOrganisationId } from '../tenant/paths.ts'
import { switchToRollbackMode } from './rollback-mode.ts'

export interface RestoreOptions {
  /** The replica's data directory, served by a READ_ONLY=1 server. */
  dataDir: string
  /** The replica URL the writer's Litestream replicates to. */
  from: string
  /** The litestream executable. */
  litestream: string
}

export interface RestoreRound {
  /** Files put in place, relative to the data directory. */
  restored: string[]
  /** Files left as they were, and why (an organisation not replicated yet, say). */
  failed: { file: string; reason: string }[]
  ms: number
}

/** control.sqlite could not be restored: nothing was put in place. */
export class RestoreFailedError extends Error {}

/** Where a round stages its copies: inside the data directory, so that a rename into place is atomic. */
const STAGING = '.restoring'

/**
 * One round of a replica's refresh: restores fresh copies of control.sqlite and of every
 * organisation's tenant file it names with `litestream restore`, switches each to rollback mode
 * (READ_ONLY=1 reads it without writing beside it) and renames it over the served one. The
 * server notices a new file on its next request. Tenant files go first, control.sqlite last,
 * so that a new organisation's tokens are accepted only once its file is there.
 */
export function restoreRound(options: RestoreOptions): RestoreRound {
  const started = performance.now()
  const staging = join(options.dataDir, STAGING)
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(join(staging, 'orgs'), { recursive: true, mode: 0o700 })
  try {
    const control = restoreFile(options, staging, 'control.sqlite')
    if (control !== undefined) throw new RestoreFailedError(`control.sqlite: ${control}`)
    const [controlFile, ...tenantFiles] = replicatedFiles(organisationIds(join(staging, 'control.sqlite')))
    const round: RestoreRound = { restored: [], failed: [], ms: 0 }
    for (const file of tenantFiles) {
      const reason = restoreFile(options, staging, file)
      if (reason === undefined) putInPlace(options.dataDir, staging, file, round)
      else round.failed.push({ file, reason })
    }
    putInPlace(options.dataDir, staging, controlFile!, round)
    round.ms = Math.round(performance.now() - started)
    return round
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/** How long one file's `litestream restore` may take before the round counts it failed. */
const RESTORE_TIMEOUT_MS = 600_000

/** Restores one file into the staging directory; the reason it failed, or undefined. */
function restoreFile(options: RestoreOptions, staging: string, file: string): string | undefined {
  const output = join(staging, file)
  // Bounded: a restore stalled on the storage must not freeze the --every loop for ever.
  const run = Bun.spawnSync([options.litestream, 'restore', '-o', output, replicaUrlOf(options.from, file)], { stdout: 'pipe', stderr: 'pipe', timeout: RESTORE_TIMEOUT_MS })
  if (run.exitCode === 0 && existsSync(output)) return undefined
  if (run.exitedDueToTimeout) return `litestream restore took over ${RESTORE_TIMEOUT_MS / 1000} s (stopped)`
  // Litestream's last line, without its own date and level: `no matching backups found`, say.
  const said = `${run.stderr.toString()}${run.stdout.toString()}`.trim().split('\n').pop()?.replace(/^\S+ \S+ (ERROR|INFO|WARN) /, '')
  return said || `litestream restore exited with status ${run.exitCode}`
}

function putInPlace(dataDir: string, staging: string, file: string, round: RestoreRound): void {
  switchToRollbackMode(join(staging, file))
  mkdirSync(dirname(join(dataDir, file)), { recursive: true, mode: 0o700 })
  renameSync(join(staging, file), join(dataDir, file))
  round.restored.push(file)
}

function organisationIds(controlFile: string): string[] {
  const db = new Database(controlFile, { readonly: true })
  try {
    // An id that is not a file name of orgs/ is never served either (tenant/paths.ts).
    return (db.query('SELECT id FROM organisations ORDER BY id').all() as { id: string }[]).map((row) => row.id).filter(isValidOrganisationId)
  } finally {
    db.close()
  }
}
