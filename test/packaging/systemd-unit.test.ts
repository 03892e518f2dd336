import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCompiledFile, type CompiledFile } from '../support/compiled-file.ts'
import { toolAvailable } from '../support/tools.ts'

/** deploy/systemd/queue-api.service, checked by systemd's own tool as a reviewer would. */

const UNIT = join(import.meta.dir, '..', '..', 'deploy', 'systemd', 'queue-api.service')
const text = readFileSync(UNIT, 'utf8')
const directives = new Map<string, string[]>()
for (const line of text.split('\n')) {
  const match = /^(\w+)=(.*)$/.exec(line)
  if (match) directives.set(match[1]!, [...(directives.get(match[1]!) ?? []), match[2]!])
}

describe.if(toolAvailable('systemd-analyze', 'scripts/install-packaging-tools.sh'))('the systemd unit', () => {
  let file: CompiledFile
  let unit: string

  beforeAll(() => {
    file = buildCompiledFile()
    // The only change: ExecStart= names the file just built (verify checks that it can be run).
    unit = join(file.emptyDir, 'queue-api.service')
    writeFileSync(unit, text.replace(/^ExecStart=\S+/m, `ExecStart=${file.path}`))
  })
  afterAll(() => file?.remove())

  test('systemd-analyze verify finds nothing to say', () => {
    const run = Bun.spawnSync(['systemd-analyze', 'verify', unit], { stdout: 'pipe', stderr: 'pipe' })
    expect(run.stderr.toString()).toBe('')
    expect(run.exitCode).toBe(0)
  })

  test('systemd-analyze security rates its exposure OK (2.0 or less)', () => {
    const run = Bun.spawnSync(['systemd-analyze', 'security', '--offline=yes', '--threshold=20', unit], { stdout: 'pipe', stderr: 'pipe' })
    expect(run.stdout.toString()).toMatch(/Overall exposure level for queue-api\.service: [0-2]\.\d OK/)
    expect(run.exitCode).toBe(0)
  })

  test('runs the compiled file as a user of its own that writes only its data directory, reloads by SIGHUP', () => {
    expect(directives.get('ExecStart')).toEqual(['/usr/local/bin/queue-api'])
    expect(directives.get('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID'])
    expect(directives.get('Restart')).toEqual(['on-failure'])
    // systemd's default sends SIGTERM to every worker too, which each would take as a second stop (no drain).
    expect(directives.get('KillMode')).toEqual(['mixed'])
    expect(directives.get('DynamicUser')).toEqual(['yes'])
    expect(directives.get('StateDirectory')).toEqual(['queue-api'])
    expect(directives.get('Environment')).toContain('DATA_DIR=%S/queue-api')
    for (const name of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp']) expect({ name, value: directives.get(name) }).toEqual({ name, value: ['yes'] })
    expect(directives.get('ProtectSystem')).toEqual(['strict'])
    expect(directives.has('ReadWritePaths')).toBe(false) // the state directory is the one writable path
  })
})
