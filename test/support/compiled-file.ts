import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')

export interface CompiledFile {
  /** The executable, built by scripts/build.ts as `npm run -s build` builds it. */
  path: string
  /** A directory with nothing of the checkout in it, for the file to run in. */
  emptyDir: string
  /** Runs the file with `args` in `emptyDir` and waits for it to end. */
  run(args: string[], env?: Record<string, string>): { status: number; stdout: string; stderr: string }
  remove(): void
}

/** Builds the compiled file into a temporary directory (not dist/, which the developer's build owns). */
export function buildCompiledFile(): CompiledFile {
  const dir = mkdtempSync(join(tmpdir(), 'qa-api-compiled-'))
  const path = join(dir, 'queue-api')
  const build = Bun.spawnSync([process.execPath, 'scripts/build.ts', '--outfile', path], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) throw new Error(`the build failed: ${build.stderr.toString()}`)
  const emptyDir = mkdtempSync(join(dir, 'cwd-'))
  return {
    path,
    emptyDir,
    run(args, env = {}) {
      const result = Bun.spawnSync([path, ...args], { cwd: emptyDir, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
      return { status: result.exitCode ?? -1, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
