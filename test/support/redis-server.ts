import { afterAll, beforeAll } from 'bun:test'
import type { Subprocess } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.ts'

/**
 * A real `redis-server` (Debian's package) for the tests of the Redis limits, and for the
 * benchmark's `redis` scenario: started by the test on a free loopback port in a temp directory,
 * with nothing persisted, and stopped by it.
 * Without redis-server on the machine those tests skip with a warning; in CI (CI=true) they fail,
 * since CI installs it (scripts/install-redis.sh).
 */

const binary = Bun.which('redis-server')

/** Whether the Redis tests can run; prints why not, and throws in CI. */
export function redisAvailable(): boolean {
  if (binary) return true
  if (process.env.CI === 'true') throw new Error('redis-server is not installed: CI installs it with scripts/install-redis.sh')
  console.warn('warning: redis-server is not installed here; the Redis tests are skipped (apt-get install redis-server, or scripts/install-redis.sh)')
  return false
}

export interface RedisServer {
  port: number
  url: string
  /** The running server's process id. */
  readonly pid: number
  /** Kills the server (SIGKILL: an outage, not a shutdown) and waits for it to go. */
  kill(): Promise<void>
  /** Starts it again on the same port, empty (nothing is persisted). */
  start(): Promise<void>
  /** Freezes (SIGSTOP) or thaws (SIGCONT) it: a server that accepts connections and answers nothing. */
  pause(): void
  resume(): void
  /** Runs one command with redis-cli; its trimmed output. */
  cli(...args: string[]): string
  stop(): Promise<void>
}

const running = new Set<Subprocess>()
// Whatever happens to the test run, no redis-server outlives it.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'qa-api-redis-'))
  let port = 0
  let child: Subprocess | undefined
  const spawn = async () => {
    const proc = Bun.spawn(
      [binary!, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', ''],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    running.add(proc)
    const deadline = Date.now() + 5000
    let output = ''
    const reader = proc.stdout.getReader()
    const decoder = new TextDecoder()
    while (!output.includes('Ready to accept connections')) {
      const read = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => null)])
      if (!read || read.done) {
        proc.kill('SIGKILL')
        running.delete(proc)
        throw new Error(`redis-server did not start on port ${port}: ${output.slice(-300)}`)
      }
      output += decoder.decode(read.value)
    }
    // Keep draining its log so that it never blocks on a full pipe.
    void (async () => {
      for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return
    })()
    child = proc
  }
  // A free port can be taken between finding it and redis binding it: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort()
    try {
      await spawn()
      break
    } catch (error) {
      if (attempt === 2) throw error
    }
  }
  const kill = async () => {
    if (!child) return
    child.kill('SIGKILL')
    await child.exited
    running.delete(child)
    child = undefined
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      if (!child) throw new Error('redis-server is not running')
      return child.pid
    },
    kill,
    start: spawn,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    cli: (...args) => Bun.spawnSync(['redis-cli', '-p', String(port), ...args]).stdout.toString().trim(),
    async stop() {
      child?.kill('SIGCONT')
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A redis-server for the tests of the calling file: started before them when redis-server is
 * available (see redisAvailable), stopped after them. The object stands for the running server.
 */
export function redisForFile(): RedisServer & { available: boolean } {
  const available = redisAvailable()
  let server: RedisServer | undefined
  beforeAll(async () => {
    if (available) server = await startRedis()
  })
  afterAll(async () => {
    await server?.stop()
  })
  const running = (): RedisServer => {
    if (!server) throw new Error('redis-server is not running: use it inside the tests of the file')
    return server
  }
  return {
    available,
    get port() {
      return running().port
    },
    get url() {
      return running().url
    },
    get pid() {
      return running().pid
    },
    kill: () => running().kill(),
    start: () => running().start(),
    pause: () => running().pause(),
    resume: () => running().resume(),
    cli: (...args: string[]) => running().cli(...args),
    stop: async () => {
      await server?.stop()
    },
  }
}
