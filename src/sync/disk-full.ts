import { statfsSync } from 'node:fs'

/**
 * A write that failed for want of space, said with the folder and the space that was free before
 * the writing began (read after the failure it is always about 0), and how much of the window's
 * export had arrived, so that whoever reads it knows what to free or where to go. No estimate of
 * the space needed: a window's need depends on how its rows compress, known only once written.
 */
export class DiskFullError extends Error {
  constructor(
    readonly folder: string,
    readonly freeBefore: number | null,
    readonly downloadedBytes: number | null,
    when = 'when the window began',
  ) {
    const free = freeBefore === null ? 'unknown space' : megabytes(freeBefore)
    const arrived = downloadedBytes === null ? '' : `, full after ${megabytes(downloadedBytes)} of its export had arrived`
    super(
      `no space left to write in ${folder} (the mirror's folder, which also holds its temporary files): ${free} free ${when}${arrived}; free space there or sync into a folder with more`,
    )
  }
}

/** Whether an error (DuckDB's, a file write's) is the file system's "no space left". */
export function isDiskFull(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown }
  return code === 'ENOSPC' || /no space left on device|ENOSPC|disk is full|out of disk space/i.test(String(message ?? error))
}

/** The bytes free to this user in `folder`, or null when the file system does not say. */
export function freeBytes(folder: string): number | null {
  try {
    const stats = statfsSync(folder)
    return Number(stats.bavail) * Number(stats.bsize)
  } catch {
    return null
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`
}
