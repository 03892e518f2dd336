import { runAdmin } from '../../src/cli/admin.ts'

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
