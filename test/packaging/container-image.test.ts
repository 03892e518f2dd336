import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { buildCompiledFile, type CompiledFile } from '../support/compiled-file.ts'
import { freePort } from '../support/free-port.ts'
import { toolAvailable } from '../support/tools.ts'

/**
 * deploy/container/Containerfile built by podman with no registry, then run as an engine would
 * run it: this sandbox refuses `podman run` (crun cannot set rlimits), so the image's filesystem
 * is exported and its entrypoint run in it under chroot, as its user, with its environment and
 * a /proc of its own (Bun reads its embedded files through /proc/self/exe).
 */

const ROOT = join(import.meta.dir, '..', '..')
const isRoot = process.getuid?.() === 0
const canRun = toolAvailable('podman', 'scripts/install-packaging-tools.sh') && toolAvailable('unshare', 'scripts/install-packaging-tools.sh') && (isRoot || notRoot())

function notRoot(): false {
  if (process.env.CI === 'true') throw new Error('the container image test runs as root (chroot, a /proc mount)')
  console.warn('warning: the container image test needs root (chroot, a /proc mount); skipped')
  return false
}

function run(argv: string[]): string {
  const result = Bun.spawnSync(argv, { stdout: 'pipe', stderr: 'pipe' })
  if (result.exitCode !== 0) throw new Error(`${argv.join(' ')}: ${result.stderr.toString()}`)
  return result.stdout.toString()
}

interface ImageConfig {
  User: string
  Env: string[]
  Entrypoint: string[]
  Volumes: Record<string, object>
}

test('context.sh without its two arguments: its usage on one line, exit 2', () => {
  const run = Bun.spawnSync(['bash', join(ROOT, 'deploy', 'container', 'context.sh')], { stdout: 'pipe', stderr: 'pipe' })
  expect(run.exitCode).toBe(2)
  expect(run.stderr.toString()).toStartWith('usage: bash deploy/container/context.sh <compiled file')
  expect(run.stderr.toString().trimEnd().split('\n')).toHaveLength(1)
})

test('context.sh passes 20 runs in a row, each gathering the C++ runtime (it failed at random when ldconfig died of SIGPIPE under pipefail)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'context-'))
  try {
    for (let run = 1; run <= 20; run++) {
      const result = Bun.spawnSync(['bash', join(ROOT, 'deploy', 'container', 'context.sh'), '/bin/sh', join(dir, 'context')], { stdout: 'pipe', stderr: 'pipe' })
      expect({ run, status: result.exitCode, stderr: result.stderr.toString() }).toEqual({ run, status: 0, stderr: '' })
      const libraries = readdirSync(join(dir, 'context', 'rootfs', 'lib', 'x86_64-linux-gnu'))
      expect(libraries).toContain('libstdc++.so.6')
      expect(libraries).toContain('libgcc_s.so.1')
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

describe.if(canRun)('the container image', () => {
  const tag = `localhost/queue-api-test-${process.pid}`
  let file: CompiledFile
  let rootfs: string
  let config: ImageConfig
  let healthcheck: { Test: string[] }

  /**
   * Runs `argv` inside the image's filesystem as its user, with its environment plus `env`: /proc
   * and /dev mounted in a mount namespace of its own (gone with the process), then exec'd into, so that
   * the process a signal is sent to is the entrypoint itself.
   */
  const inImage = (argv: string[], env: Record<string, string>, user = config.User): Subprocess<'ignore', 'pipe', 'pipe'> => {
    const environment = Object.fromEntries(config.Env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]))
    // A container runtime gives every container /proc and /dev (the supervisor's workers are
    // spawned with /dev/null as their stdin); the host's /dev stands in for the runtime's.
    const script = 'root=$0 user=$1; shift; mkdir -p "$root/dev" && mount -t proc proc "$root/proc" && mount --bind /dev "$root/dev" && exec chroot --userspec="$user" "$root" "$@"'
    return Bun.spawn(['unshare', '--mount', '--propagation', 'private', '/bin/sh', '-c', script, rootfs, user, ...argv], {
      env: { ...environment, ...env },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
  }

  beforeAll(() => {
    file = buildCompiledFile()
    const context = join(file.emptyDir, 'context')
    run(['bash', join(ROOT, 'deploy', 'container', 'context.sh'), file.path, context])
    run(['podman', 'build', '--pull=never', '--network=none', '--format', 'docker', '-q', '-t', tag, context])
    ;[{ Config: config, Healthcheck: healthcheck }] = JSON.parse(run(['podman', 'image', 'inspect', tag]))
    const container = run(['podman', 'create', tag]).trim()
    const tar = join(file.emptyDir, 'image.tar')
    try {
      run(['podman', 'export', '-o', tar, container])
    } finally {
      Bun.spawnSync(['podman', 'rm', container], { stderr: 'ignore', stdout: 'ignore' })
    }
    rootfs = join(file.emptyDir, 'rootfs')
    mkdirSync(rootfs)
    run(['tar', '-x', '--same-owner', '-f', tar, '-C', rootfs])
    mkdirSync(join(rootfs, 'proc'), { recursive: true })
  })

  afterAll(() => {
    Bun.spawnSync(['podman', 'rmi', '-f', tag], { stderr: 'ignore', stdout: 'ignore' })
    file?.remove()
  })

  test('FROM scratch: the compiled file, the C libraries it links and the user, nothing else (no shell)', () => {
    // dev, proc, run and etc/hosts and the like are what every container engine adds.
    expect(readdirSync(rootfs).filter((name) => !['dev', 'proc', 'run'].includes(name)).sort()).toEqual(['data', 'etc', 'lib', 'lib64', 'tmp', 'usr'])
    expect(readdirSync(join(rootfs, 'lib', 'x86_64-linux-gnu')).sort()).toEqual(['libc.so.6', 'libdl.so.2', 'libgcc_s.so.1', 'libm.so.6', 'libpthread.so.0', 'libstdc++.so.6'])
    expect(readdirSync(join(rootfs, 'usr', 'local', 'bin'))).toEqual(['queue-api'])
    expect(() => statSync(join(rootfs, 'bin', 'sh'))).toThrow()
  })

  test('runs as a user that is not root, DATA_DIR a volume it owns, a health check that needs no shell', () => {
    expect(config.User).toBe('10001:10001')
    expect(config.Env).toContain('DATA_DIR=/data')
    expect(Object.keys(config.Volumes)).toEqual(['/data'])
    expect(statSync(join(rootfs, 'data')).uid).toBe(10001)
    expect(config.Entrypoint).toEqual(['/usr/local/bin/queue-api'])
    expect(healthcheck.Test).toEqual(['CMD', '/usr/local/bin/queue-api', 'health'])
  })

  test('its entrypoint serves: the pages and the API from the data directory it made, and the health check says so', async () => {
    const port = String(await freePort())
    const server = inImage(config.Entrypoint, { PORT: port })
    try {
      let output = ''
      const reader = server.stdout.getReader()
      while (!output.includes('"event":"listening"')) {
        const { done, value } = await reader.read()
        if (done) throw new Error(`the entrypoint ended: ${await new Response(server.stderr).text()}`)
        output += new TextDecoder().decode(value)
      }
      reader.releaseLock()
      const base = `http://127.0.0.1:${port}`
      for (const path of ['/readyz', '/', '/docs', '/assets/app.js', '/assets/swagger-ui/swagger-ui-bundle.js']) {
        expect({ path, status: (await fetch(base + path)).status }).toEqual({ path, status: 200 })
      }
      const health = inImage(healthcheck.Test.slice(1), { PORT: port })
      expect(await health.exited).toBe(0)
      const data = statSync(join(rootfs, 'data', 'control.sqlite'))
      expect({ uid: data.uid, mode: data.mode & 0o777 }).toEqual({ uid: 10001, mode: 0o600 })
    } finally {
      server.kill('SIGTERM')
      await server.exited
    }
    const afterwards = inImage(healthcheck.Test.slice(1), { PORT: port })
    expect(await afterwards.exited).toBe(1)
  })

  test('admin run as root in the container (podman exec -u 0) makes its files as the image\'s user', async () => {
    const admin = inImage(['/usr/local/bin/queue-api', 'admin', 'org', 'create', '--name', 'Made by root', '--json'], {}, '0:0')
    const [status, stdout, stderr] = await Promise.all([admin.exited, new Response(admin.stdout).text(), new Response(admin.stderr).text()])
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' })
    const file = statSync(join(rootfs, 'data', 'orgs', `${JSON.parse(stdout).id}.sqlite`))
    expect({ uid: file.uid, gid: file.gid, mode: file.mode & 0o777 }).toEqual({ uid: 10001, gid: 10001, mode: 0o600 })
  })
})
