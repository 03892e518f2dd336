import type { Subprocess } from 'bun'
import { writeFileSync } from 'node:fs'
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

/**
 * The configuration the test runs, which docs/operations.md#more-than-one-machine shows with
 * its own addresses (the test checks that the two agree): `bind` and each server as host:port.
 */
export function haproxyConfig(bind: string, servers: readonly string[]): string {
  return `global
  maxconn 4096

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  # A request whose server went away is sent again, to another server.
  retries 3
  option redispatch
  retry-on conn-failure empty-response

frontend api
  bind ${bind}
  default_backend replicas

backend replicas
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1
${servers.map((server, i) => `  server replica${i + 1} ${server} check`).join('\n')}
`
}

export interface Haproxy {
  base: string
  stop(): Promise<void>
}

/** Starts haproxy in the foreground on a free port, balancing `servers` (ports on 127.0.0.1). */
export async function startHaproxy(dir: string, servers: readonly number[]): Promise<Haproxy> {
  const port = await freePort()
  const config = join(dir, 'haproxy.cfg')
  writeFileSync(config, haproxyConfig(`127.0.0.1:${port}`, servers.map((serverPort) => `127.0.0.1:${serverPort}`)))
  const child = Bun.spawn([binary!, '-db', '-f', config], { stdout: 'ignore', stderr: 'pipe' })
  running.add(child)
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 10_000
  for (;;) {
    const ready = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false)
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
