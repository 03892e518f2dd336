import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { replicaUrlOf, replicatedFiles } from './litestream-config.ts'
import { organisationIdsIn } from './organisations.ts'
import { isValidOrganisationId, tenantDirectory } from '../tenant/paths.ts'
import { switchToRollbackMode } from './rollback-mode.ts'
import { readCopyState, writeCopyState, type CopyState } from './copy-state.ts'
import { storagePosition } from './storage-position.ts'

export interface RestoreOptions {
  /** The replica's data directory, served by a READ_ONLY=1 server. */
  dataDir: string
  /** The replica URL the writer's Litestream replicates to. */
  from: string
  /** The litestream executable. */
  litestream: string
  /** The wall clock (ms), for the state's confirmedAt. @default Date.now */
  now?: () => number
}

export interface RestoreRound {
  /** Files put in place, relative to the data directory. */
  restored: string[]
  /** Files whose position in the storage had not moved since they were put in place: left as they are. */
  unchanged: number
  /** Files left as they were, and why (an organisation not replicated yet, say). */
  failed: { file: string; reason: string }[]
  /** Tenant files removed: their organisation is no longer in the restored control.sqlite (deleted on the writer). */
  removed: string[]
  ms: number
}

/** control.sqlite could not be restored: nothing was put in place. */
export class RestoreFailedError extends Error {}

/** Where a round stages its copies: inside the data directory, so that a rename into place is atomic. */
const STAGING = '.restoring'

/**
 * One round of a replica's refresh. For each file (control.sqlite first, to learn the
 * organisations), its position in the storage is read; a file whose position has not moved
 * since it was put in place is left as it is, so that a round's cost follows the changes, not
 * the data directory's size. Any other is restored with `litestream restore`, switched to
 * rollback mode (READ_ONLY=1 reads it without writing beside it) and renamed over the served
 * one. Tenant files go in first, control.sqlite last, so that a new organisation's tokens are
 * accepted only once its file is there; a deleted organisation's file goes after it, once its
 * tokens are unknown. The round ends by recording the copy's state
 * (replica/copy-state.ts): confirmed current as of the round's start, and what failed.
 */
export function restoreRound(options: RestoreOptions): RestoreRound {
  const started = performance.now()
  const startedAt = (options.now ?? Date.now)()
  const previous = previousState(options.dataDir)
  const positions: Record<string, string> = {}
  const staging = join(options.dataDir, STAGING)
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(join(staging, 'orgs'), { recursive: true, mode: 0o700 })
  try {
    const round: RestoreRound = { restored: [], unchanged: 0, failed: [], removed: [], ms: 0 }
    const controlFile = 'control.sqlite'
    const control = fetchFile(options, previous, staging, controlFile, positions)
    if (control.failed !== undefined) throw new RestoreFailedError(`control.sqlite: ${control.failed}`)
    const controlPath = control.staged ? join(staging, controlFile) : join(options.dataDir, controlFile)
    const organisationIds = organisationIdsIn(controlPath)
    const [, ...tenantFiles] = replicatedFiles(organisationIds)
    for (const file of tenantFiles) {
      const fetched = fetchFile(options, previous, staging, file, positions)
      if (fetched.failed !== undefined) round.failed.push({ file, reason: fetched.failed })
      else if (fetched.staged) putInPlace(options.dataDir, staging, file, round)
      else round.unchanged++
    }
    if (control.staged) putInPlace(options.dataDir, staging, controlFile, round)
    else round.unchanged++
    removeDeleted(options.dataDir, new Set(organisationIds), round)
    writeCopyState(options.dataDir, { version: 1, from: options.from, confirmedAt: new Date(startedAt).toISOString(), unrestored: round.failed, positions })
    round.ms = Math.round(performance.now() - started)
    return round
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

function previousState(dataDir: string): CopyState | undefined {
  try {
    return readCopyState(dataDir)
  } catch {
    return undefined // damaged: every file is restored again, and the state written anew
  }
}

/**
 * Stages a fresh copy of `file` unless the storage's position equals the one recorded when the
 * served file was put in place. Records the position the file is at once this round ends.
 */
function fetchFile(options: RestoreOptions, previous: CopyState | undefined, staging: string, file: string, positions: Record<string, string>): { staged: boolean; failed?: string } {
  const url = replicaUrlOf(options.from, file)
  // Read before the restore: a segment shipped in between makes the next round restore again, never miss it.
  const position = storagePosition(options.litestream, url)
  if (position !== undefined && previous?.positions[file] === position && existsSync(join(options.dataDir, file))) {
    positions[file] = position
    return { staged: false }
  }
  const failed = restoreFile(options.litestream, url, join(staging, file))
  if (failed !== undefined) {
    // The served file (if any) stays; its recorded position no longer says it is current.
    return { staged: false, failed }
  }
  if (position !== undefined) positions[file] = position
  return { staged: true }
}

/** How long one file's `litestream restore` may take before the round counts it failed. */
const RESTORE_TIMEOUT_MS = 600_000

/** Restores one file to `output`; the reason it failed, or undefined. */
function restoreFile(litestream: string, url: string, output: string): string | undefined {
  // Bounded: a restore stalled on the storage must not freeze the --every loop for ever.
  const run = Bun.spawnSync([litestream, 'restore', '-o', output, url], { stdout: 'pipe', stderr: 'pipe', timeout: RESTORE_TIMEOUT_MS })
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

/** Removes orgs/<id>.sqlite for every id the served control.sqlite no longer names (`org delete` on the writer). */
function removeDeleted(dataDir: string, organisationIds: Set<string>, round: RestoreRound): void {
  const directory = tenantDirectory(dataDir)
  if (!existsSync(directory)) return
  for (const name of readdirSync(directory).sort()) {
    const id = name.endsWith('.sqlite') ? name.slice(0, -'.sqlite'.length) : ''
    if (!isValidOrganisationId(id) || organisationIds.has(id)) continue
    // A server that has it open keeps reading it until it closes it; its tokens are already unknown.
    rmSync(join(directory, name), { force: true })
    round.removed.push(`orgs/${name}`)
  }
}
