import packageJson from '../../package.json' with { type: 'json' }

/**
 * Which release and which commit runs: `queue_api_build_info`'s labels and `queue-api --version`.
 * The compiled file has its commit built in (scripts/build.ts defines QUEUE_API_REVISION); run
 * from a checkout, the commit is asked of git once, at start.
 */

declare const QUEUE_API_REVISION: string | undefined

export const SERVICE_VERSION: string = packageJson.version

let revision: string | undefined

/** The commit the running code came from (abbreviated, `-dirty` when the checkout had changes), or `unknown`. */
export function serviceRevision(): string {
  revision ??= typeof QUEUE_API_REVISION === 'string' ? QUEUE_API_REVISION : revisionOfCheckout(import.meta.dir)
  return revision
}

/** `git describe`'s commit of the checkout holding `directory`; `unknown` outside one or without git. */
export function revisionOfCheckout(directory: string): string {
  try {
    const result = Bun.spawnSync(['git', 'describe', '--always', '--abbrev=12', '--dirty', '--exclude=*'], { cwd: directory, stdout: 'pipe', stderr: 'ignore' })
    const revision = result.stdout.toString().trim()
    return result.exitCode === 0 && revision !== '' ? revision : 'unknown'
  } catch {
    return 'unknown' // no git on this machine
  }
}
