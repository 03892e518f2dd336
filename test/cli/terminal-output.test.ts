import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { escapeTerminal, terminalSafeJson } from '../../src/cli/terminal-text.ts'
import { adminOnFreshDataDir } from '../support/admin-cli.ts'
import { runServerProcessToExit } from '../support/server-process.ts'

/**
 * Terminal control characters in what a command prints for a person are shown as escapes, never
 * run by the terminal (src/cli/terminal-text.ts): a name another admin chose, a tenant file's
 * ids, a setting's value, an argument.
 */
const ROOT = join(import.meta.dir, '../..')
/** Retitles the window, rings, clears the screen; then a C1 CSI and DEL. */
const HOSTILE = 'Acme\x1b]0;owned\x07\x1b[2J\r\x9b31m\x7f Nord'
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/

describe('escapeTerminal', () => {
  test('every C0 character but newline and tab, DEL and C1 shown as \\xNN; other text as it is', () => {
    expect(escapeTerminal(HOSTILE)).toBe('Acme\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x9b31m\\x7f Nord')
    expect(escapeTerminal('Café Nord\tline\nnext ✓')).toBe('Café Nord\tline\nnext ✓')
  })

  test('JSON: C1 and DEL escaped too, read back as the same text', () => {
    const text = terminalSafeJson({ name: HOSTILE })
    expect(text).not.toMatch(RAW_CONTROL)
    expect(JSON.parse(text)).toEqual({ name: HOSTILE })
  })
})

describe('admin', () => {
  const fresh = adminOnFreshDataDir(Date.parse('2026-03-01T00:00:00Z'))

  test('an organisation and a token named with control characters: listed escaped; --json exact and escaped', () => {
    const created = fresh.admin('org', 'create', '--name', HOSTILE, '--slug', 'acme')
    expect(created.status).toBe(0)
    expect(created.stdout).not.toMatch(RAW_CONTROL)
    expect(created.stdout).toContain('Acme\\x1b]0;owned\\x07\\x1b[2J')
    const token = fresh.admin('token', 'create', '--org', 'acme', '--name', `ci\x1b[2J`)
    expect(token.stdout).not.toMatch(RAW_CONTROL)
    for (const argv of [['org', 'list'], ['token', 'list', '--org', 'acme']]) {
      const run = fresh.admin(...argv)
      expect({ argv, raw: RAW_CONTROL.test(run.stdout) }).toEqual({ argv, raw: false })
    }
    const json = fresh.admin('org', 'list', '--json')
    expect(json.stdout).not.toMatch(RAW_CONTROL)
    expect(json.json().organisations[0].name).toBe(HOSTILE)
  })

  test('an error quoting the caller\'s argument: one line, escaped, with and without --json', () => {
    const run = fresh.admin('org', 'update', `x\x1b[2J\ry`, '--plan', 'paid')
    expect(run.status).toBe(2)
    expect(run.stderr).toBe('admin: unknown organisation "x\\x1b[2J\\x0dy"\n')
    const json = fresh.admin('org', 'update', `x\x9b2J`, '--plan', 'paid', '--json')
    expect(json.stderr).not.toMatch(RAW_CONTROL)
    expect(JSON.parse(json.stderr).message).toBe('unknown organisation "x\x9b2J"')
  })
})

describe('the server and queue-api', () => {
  test('a setting\'s value with control characters: the refusal escaped', async () => {
    const { status, stderr } = await runServerProcessToExit({ PORT: `3000\x1b]0;owned\x07` })
    expect(status).toBe(2)
    expect(stderr).not.toMatch(RAW_CONTROL)
    expect(stderr).toContain('\\x1b]0;owned\\x07')
  })

  test('an unknown command of the compiled file\'s entry: the refusal escaped', () => {
    const run = Bun.spawnSync([process.execPath, 'src/cli/queue-api.ts', `x\x1b[2J`], { cwd: ROOT })
    expect(run.exitCode).toBe(2)
    expect(run.stderr.toString()).toBe('queue-api: unknown command "x\\x1b[2J" (queue-api --help lists them)\n')
  })
})
