import type { Subprocess } from 'bun'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

/**
 * Litestream 0.3 from its npm package (a devDependency: always there after npm install), the
 * writer side of the replica tests: `litestream replicate` on a generated config, stopped by
 * the test. The restore side is the project's own `admin replica restore`.
 */
// The platform's binary itself, from the package of this platform (a devDependency by name: the
// wrapper package lists platforms the registry does not have, which breaks npm ci).
export const LITESTREAM = resolve(import.meta.dir, `../../node_modules/@flydotio/litestream-${process.platform}-${process.arch}/litestream`)

const running = new Set<Subprocess>()
// Whatever happens to the test run, no litestream outlives it.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export interface Replication {
  /** Everything Litestream logged so far. */
  output(): string
  stop(): Promise<void>
}

/** Runs `litestream replicate` with `config` (a litestream.yml), written into `dir`. */
export function replicate(config: string, dir: string): Replication {
  const path = join(dir, 'litestream.yml')
  writeFileSync(path, config)
  const child = Bun.spawn([LITESTREAM, 'replicate', '-config', path], { stdout: 'pipe', stderr: 'pipe' })
  running.add(child)
  let output = ''
  const decoder = new TextDecoder()
  for (const stream of [child.stdout, child.stderr]) {
    void (async () => {
      const reader = stream.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        output += decoder.decode(value)
      }
    })()
  }
  return {
    output: () => output,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
      running.delete(child)
    },
  }
}
