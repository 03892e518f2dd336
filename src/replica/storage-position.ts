import { createHash } from 'node:crypto'

/** How long listing one file's WAL segments may take. */
const LIST_TIMEOUT_MS = 60_000

/**
 * Where one file stands in the storage: a digest of `litestream wal <url>`, the list of every
 * WAL segment of every generation. Any write the writer ships adds a segment, a new generation
 * (a restore, a file made again) starts its own, so an equal digest means nothing to restore;
 * a segment pruned by retention changes it too, which costs one needless restore, never a
 * missed one. Undefined when the storage cannot be listed (the round then restores the file).
 */
export function storagePosition(litestream: string, url: string): string | undefined {
  const run = Bun.spawnSync([litestream, 'wal', url], { stdout: 'pipe', stderr: 'pipe', timeout: LIST_TIMEOUT_MS })
  const listing = run.stdout.toString()
  // Only a header line: nothing shipped yet, which `restore` reports better.
  if (run.exitCode !== 0 || listing.trim().split('\n').length < 2) return undefined
  return createHash('sha256').update(listing).digest('hex').slice(0, 32)
}
