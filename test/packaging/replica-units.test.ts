import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toolAvailable } from '../support/tools.ts'

/**
 * deploy/systemd/queue-api-ship.service (the writer's Litestream) and queue-api-restore.service
 * (a replica's restore loop), checked by systemd's own tool. verify needs ExecStart's program
 * to exist: the units are checked with it pointing at this Bun (the compiled file is built by
 * systemd-unit.test.ts); their arguments are the ones shipped.
 */
const DEPLOY = join(import.meta.dir, '..', '..', 'deploy', 'systemd')
const UNITS = ['queue-api-ship.service', 'queue-api-restore.service']
const directives = (text: string) => {
  const found = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const match = /^(\w+)=(.*)$/.exec(line)
    if (match) found.set(match[1]!, [...(found.get(match[1]!) ?? []), match[2]!])
  }
  return found
}

describe.if(toolAvailable('systemd-analyze', 'scripts/install-packaging-tools.sh'))('the replicas\' systemd units', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'units-'))
    for (const unit of UNITS) writeFileSync(join(dir, unit), readFileSync(join(DEPLOY, unit), 'utf8').replace(/^ExecStart(Pre)?=\S+/gm, (_, pre: string | undefined) => `ExecStart${pre ?? ''}=${process.execPath}`))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  for (const unit of UNITS) {
    test(`${unit}: systemd-analyze verify finds nothing to say; exposure OK`, () => {
      const verify = Bun.spawnSync(['systemd-analyze', 'verify', join(dir, unit)], { stdout: 'pipe', stderr: 'pipe' })
      expect(verify.stderr.toString()).toBe('')
      expect(verify.exitCode).toBe(0)
      const security = Bun.spawnSync(['systemd-analyze', 'security', '--offline=yes', '--threshold=20', join(dir, unit)], { stdout: 'pipe', stderr: 'pipe' })
      expect(security.stdout.toString()).toMatch(/Overall exposure level for .*: [0-2]\.\d OK/)
    })
  }

  test('both run the admin CLI of the installed file, as queue-api.service\'s user, on its data directory', () => {
    const server = directives(readFileSync(join(DEPLOY, 'queue-api.service'), 'utf8'))
    const [ship, restore] = UNITS.map((unit) => directives(readFileSync(join(DEPLOY, unit), 'utf8')))
    expect(ship!.get('ExecStart')).toEqual(['/usr/local/bin/queue-api admin replica ship --to ${REPLICA_URL} --litestream /usr/local/bin/litestream'])
    expect(restore!.get('ExecStart')).toEqual(['/usr/local/bin/queue-api admin replica restore --from ${REPLICA_URL} --every 5 --litestream /usr/local/bin/litestream'])
    // A fresh replica's server (READ_ONLY=1) exits 2 on an empty directory: the restore unit counts as
    // started only once a first round has filled it, and keeps the server up once it is.
    expect(restore!.get('ExecStartPre')).toEqual(['/usr/local/bin/queue-api admin replica restore --from ${REPLICA_URL} --litestream /usr/local/bin/litestream'])
    expect(restore!.get('Before')).toEqual(['queue-api.service'])
    expect(restore!.get('Upholds')).toEqual(['queue-api.service'])
    expect(restore!.get('TimeoutStartSec')).toEqual(['30min'])
    for (const unit of [ship!, restore!]) {
      expect(unit.get('User')).toEqual(['queue-api'])
      expect(unit.get('DynamicUser')).toEqual(['yes'])
      expect(unit.get('StateDirectory')).toEqual(server.get('StateDirectory')!)
      expect(unit.get('Environment')).toContain('DATA_DIR=%S/queue-api')
      expect(unit.get('RestartPreventExitStatus')).toEqual(['2'])
    }
    // The shipper alone gets SIGTERM and stops Litestream once.
    expect(ship!.get('KillMode')).toEqual(['mixed'])
  })
})
