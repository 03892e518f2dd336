import { describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { tempDataDir } from '../support/harness.ts'
import { alive, childrenOf } from '../support/processes.ts'

/**
 * The admin CLI as an operator's shell runs it: a separate process, through npm. A data directory
 * its user cannot write is one line and exit 2, as for the server (not a stack trace), and a
 * signal to npm reaches the CLI itself (`exec`), so that a restore loop a process manager stops
 * does not run on.
 */
const ROOT = join(import.meta.dir, '../..')
const isRoot = process.getuid?.() === 0

describe('the admin CLI as a process', () => {
  test.if(isRoot)("a data directory of another user: one line naming it, its owner and the user, exit 2 (also with --json)", () => {
    const temp = tempDataDir()
    try {
      const dir = join(temp.dir, 'root-owned')
      mkdirSync(dir)
      chmodSync(dir, 0o755)
      chmodSync(temp.dir, 0o755)
      for (const json of [false, true]) {
        const run = Bun.spawnSync(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', join(ROOT, 'node_modules/.bin/bun'), 'src/cli/admin.ts', 'org', 'list', ...(json ? ['--json'] : [])], {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATA_DIR: dir, TMPDIR: '/tmp' },
        })
        expect(run.exitCode).toBe(2)
        // With --json the one line is a JSON document, on standard error as without it.
        const said = run.stderr.toString()
        expect(said.trim().split('\n')).toHaveLength(1)
        expect(said).toContain(`DATA_DIR ${dir} belongs to user root (uid 0), not to user nobody (uid 65534) running this: `)
        if (json) expect(JSON.parse(said)).toMatchObject({ error: 'configuration' })
      }
    } finally {
      temp.cleanup()
    }
  })

  test('npm run admin execs the CLI: SIGTERM to npm ends a restore loop too', async () => {
    const temp = tempDataDir()
    try {
      const npm = Bun.spawn(['npm', 'run', '-s', 'admin', '--', 'replica', 'restore', '--from', `file://${join(temp.dir, 'nothing-here')}`, '--every', '1', '--litestream', '/bin/true'], {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: join(temp.dir, 'replica') },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const tree = () => [npm.pid, ...childrenOf(npm.pid), ...childrenOf(npm.pid).flatMap(childrenOf)]
      const runsCli = (pid: number) => Bun.file(`/proc/${pid}/cmdline`).text().then((line) => line.includes('admin.ts'), () => false)
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline && !(await Promise.all(tree().map(runsCli))).some(Boolean)) await Bun.sleep(50)
      const running = tree()
      expect((await Promise.all(running.map(runsCli))).some(Boolean)).toBe(true)
      npm.kill('SIGTERM')
      await npm.exited
      await Bun.sleep(300)
      expect(running.filter(alive)).toEqual([])
    } finally {
      temp.cleanup()
    }
  })
})
