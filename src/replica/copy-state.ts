import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * What `replica restore` records in a replica's data directory after each round, and the
 * READ_ONLY=1 server reads (docs/operations.md#more-than-one-machine): when the copy was last
 * confirmed current against the storage, the files it could not restore, and each file's
 * position in the storage (what the next round compares to skip an unchanged file). Its
 * presence is also the replica's mark (replica/mark.ts). Versioned: a later release may add fields.
 */
export interface CopyState {
  version: 1
  /** The storage the copy comes from (the --from URL). */
  from: string
  /**
   * When the last round that reached the storage began (ISO 8601): every file served is at
   * least as new as the storage was then, so the copy's age is measured from here.
   */
  confirmedAt: string
  /** Files named by control.sqlite that the storage could not give, and why. */
  unrestored: { file: string; reason: string }[]
  /** Each restored file's position in the storage (Litestream's generation and last WAL segment). */
  positions: Record<string, string>
}

/** The state file, relative to the data directory. A dot file: never an organisation's. */
export const COPY_STATE_FILE = '.replica.json'

/** The state as recorded, or undefined when the directory holds none (not a replica's); throws on a damaged file. */
export function readCopyState(dataDir: string): CopyState | undefined {
  const path = join(dataDir, COPY_STATE_FILE)
  if (!existsSync(path)) return undefined
  const state = JSON.parse(readFileSync(path, 'utf8')) as CopyState
  if (state.version !== 1 || typeof state.confirmedAt !== 'string' || Number.isNaN(Date.parse(state.confirmedAt))) {
    throw new Error(`${COPY_STATE_FILE} is not a state this release knows (version ${String(state.version)})`)
  }
  return { ...state, unrestored: state.unrestored ?? [], positions: state.positions ?? {} }
}

/** Writes the state whole (a rename over the old one): a reader never sees half of it. */
export function writeCopyState(dataDir: string, state: CopyState): void {
  const path = join(dataDir, COPY_STATE_FILE)
  // 0600 like every file of the data directory: it names the storage URL.
  writeFileSync(`${path}.new`, JSON.stringify(state) + '\n', { mode: 0o600 })
  renameSync(`${path}.new`, path)
}

/** How the server sees its copy: its age in seconds and what it could not restore. */
export interface CopyHealth {
  ageSeconds: number
  unrestored: string[]
}

/**
 * The copy's health at `now`, or undefined for a data directory that is not a replica's. A state
 * file that cannot be read counts as a copy of unknown, so unbounded, age.
 */
export function copyHealth(dataDir: string, now: number): CopyHealth | undefined {
  let state: CopyState | undefined
  try {
    state = readCopyState(dataDir)
  } catch {
    return { ageSeconds: Number.POSITIVE_INFINITY, unrestored: [] }
  }
  if (!state) return undefined
  return { ageSeconds: Math.max(0, (now - Date.parse(state.confirmedAt)) / 1000), unrestored: state.unrestored.map((entry) => entry.file) }
}
