import type { Subprocess } from 'bun'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from './free-port.ts'

/**
 * A real HAProxy (Debian's package) in front of servers of the test, with a config made here:
 * round robin, health checks on /readyz, and a retry on another server for a request whose
 * connection failed. Without haproxy on the machine the test skips with a warning; in CI
 * (CI=true) it fails, since CI installs it (scripts/install-haproxy.sh).
 */

const binary = Bun.which('haproxy')

export function haproxyAvailable(): boolean {
  if (binary) return true
  if (process.env.CI === 'true') throw new Error('haproxy is not installed: CI installs it with scripts/install-haproxy.sh')
  console.warn('warning: haproxy is not installed here; the replica topology test is skipped (apt-get install haproxy, or scripts/install-haproxy.sh)')
  return false
}

const running = new Set<Subprocess>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** The configuration operators install (deploy/haproxy/haproxy.cfg); the tests run it with their own addresses. */
export const HAPROXY_CONFIG = join(import.meta.dir, '../../deploy/haproxy/haproxy.cfg')

/** deploy/haproxy/haproxy.cfg with `bind` and the servers (host:port each) of a test. */
export function haproxyConfig(bind: string, servers: readonly string[]): string {
  const shipped = readFileSync(HAPROXY_CONFIG, 'utf8')
  const lines = shipped.split('\n').filter((line) => !/^\s+server replica\d+ /.test(line))
  const at = shipped.split('\n').findIndex((line) => /^\s+server replica\d+ /.test(line))
  lines.splice(at, 0, ...servers.map((server, i) => `  server replica${i + 1} ${server} check`))
  return lines.join('\n').replace(/^  bind \*:80$/m, `  bind ${bind}`)
}

/** `haproxy -c -f <file>`: its status and what it said. */
export function checkHaproxyConfig(file: string): { status: number; output: string } {
  const run = Bun.spawnSync([binary!, '-c', '-f', file], { stdout: 'pipe', stderr: 'pipe' })
  return { status: run.exitCode, output: run.stdout.toString() + run.stderr.toString() }
}

export interface Haproxy {
  base: string
  stop(): Promise<void>
}

/** Starts haproxy in the foreground on a free port, balancing `servers` (ports on 127.0.0.1). */
export async function startHaproxy(dir: string, servers: readonly number[], { waitReady = true } = {}): Promise<Haproxy> {
  const port = await freePort()
  const config = join(dir, waitReady ? 'haproxy.cfg' : `haproxy-${port}.cfg`)
  writeFileSync(config, haproxyConfig(`127.0.0.1:${port}`, servers.map((serverPort) => `127.0.0.1:${serverPort}`)))
  const child = Bun.spawn([binary!, '-db', '-f', config], { stdout: 'ignore', stderr: 'pipe' })
  running.add(child)
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    // Without waitReady, any answer of HAProxy's own (its 503 when no server is up) will do.
    const ready = await fetch(`${base}/readyz`).then((r) => r.status === 200 || !waitReady, () => false)
    if (ready) break
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL')
      throw new Error(`haproxy did not start: ${await new Response(child.stderr).text()}`)
    }
    await Bun.sleep(50)
  }
  return {
    base,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
      running.delete(child)
    },
  }
}
