import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { COPY_STATE_FILE } from './copy-state.ts'

/**
 * A replica's data directory is the restore loop's to fill (`replica restore` leaves its state
 * file there, replica/copy-state.ts): a write into it would be lost at the next round, and would
 * make the copy differ from the writer's meanwhile. Whatever writes (the admin CLI, a server
 * without READ_ONLY=1) asks here first.
 */
export function isReplicaDataDirectory(dataDir: string): boolean {
  return existsSync(join(dataDir, COPY_STATE_FILE))
}

/** The one line that refuses a write into a replica's data directory: `what` was refused, `instead` says what to do. */
export function replicaRefusal(dataDir: string, what: string, instead = 'run it on the writer, whose files Litestream ships'): string {
  return `${what}: ${dataDir} is a replica's data directory (\`replica restore\` fills it; it holds ${COPY_STATE_FILE}); ${instead}`
}

/** What a round leaves behind if it is stopped half-way: not a writer's. */
const RESTORE_LEFTOVERS = new Set(['.restoring'])

/**
 * Why `replica restore` must not fill `dataDir`, or undefined: only an empty directory (a fresh
 * replica's) or a replica's own is filled. Anything else holds a writer's files, which the
 * first round would replace and the mark would then make read-only for good.
 */
export function restoreRefusal(dataDir: string): string | undefined {
  if (!existsSync(dataDir) || isReplicaDataDirectory(dataDir)) return undefined
  const entries = readdirSync(dataDir).filter((name) => !RESTORE_LEFTOVERS.has(name))
  if (entries.length === 0) return undefined
  return `replica restore refused: ${dataDir} is not a replica's data directory (it holds ${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}, and no ${COPY_STATE_FILE}); restore into an empty directory`
}
