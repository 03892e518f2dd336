import { afterEach, beforeEach } from 'bun:test'
import { runAdmin } from '../../src/cli/admin.ts'
import { tempDataDir } from './harness.ts'

/** What one in-process run of the admin CLI wrote, and its exit status. */
export interface AdminRun {
  argv: string[]
  status: number
  stdout: string
  stderr: string
  json(): any
}

/** Runs the admin CLI in-process on `dataDir()` at `now`, and captures what it wrote. */
export function adminRunner(dataDir: () => string, now: number): (...argv: string[]) => AdminRun {
  return (...argv) => {
    let stdout = ''
    let stderr = ''
    const status = runAdmin(argv, { dataDir: dataDir(), now, out: (t) => (stdout += t), err: (t) => (stderr += t) })
    return { argv, status, stdout, stderr, json: () => JSON.parse(stdout) }
  }
}

/**
 * A data directory of its own for every test of the file (made before each, removed after) and
 * the admin CLI run on it at `now`. A test may point `dataDir` elsewhere inside it.
 */
export function adminOnFreshDataDir(now: number): { dataDir: string; admin: (...argv: string[]) => AdminRun } {
  const fresh: { dataDir: string; admin: (...argv: string[]) => AdminRun } = { dataDir: '', admin: adminRunner(() => fresh.dataDir, now) }
  let cleanup = () => {}
  beforeEach(() => {
    const made = tempDataDir()
    fresh.dataDir = made.dir
    cleanup = made.cleanup
  })
  afterEach(() => cleanup())
  return fresh
}
