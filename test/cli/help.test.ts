import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'

/** From a checkout, --help names the command as it was typed: npm's scripts, or Bun on the file. */

const ROOT = join(import.meta.dir, '..', '..')

function run(argv: string[]) {
  // npm_lifecycle_event is npm's, set for the script it runs: not inherited from a test run under npm.
  const env = { ...process.env }
  delete env.npm_lifecycle_event
  const result = Bun.spawnSync(argv, { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  return { status: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
}

describe('--help from a checkout', () => {
  test.each([
    [['npm', 'start', '--', '--help'], 'usage: npm start --\n'],
    [['npm', 'run', '-s', 'admin', '--', '--help'], 'usage: npm run -s admin -- <command> [options]'],
    [['npm', 'run', '-s', 'admin', '--', 'token', 'revoke', '--help'], 'usage: npm run -s admin -- <command> [options]'],
    [['npm', 'run', '-s', 'sync', '--', '--help'], 'usage: npm run -s sync -- --url <base URL>'],
    [['npm', 'run', '-s', 'duckdb', '--', '--help'], 'usage: npm run -s duckdb -- <file.duckdb> "<SQL>"\n'],
    [[process.execPath, 'src/cli/admin.ts', '--help'], 'usage: bun src/cli/admin.ts <command> [options]'],
    [[process.execPath, 'src/main.ts', '-h'], 'usage: bun src/main.ts\n'],
  ])('%p: usage, exit 0', (argv, start) => {
    const result = run(argv)
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
    expect(result.stdout.replace(/^\n?> .*\n> .*\n\n/, '')).toStartWith(start)
  })

  test('npm start with an argument other than --help: one line, exit 2, nothing started', () => {
    const result = run([process.execPath, 'src/main.ts', '--port', '80'])
    expect(result).toEqual({ status: 2, stdout: '', stderr: 'the server takes no arguments (got "--port"); it is configured by environment variables\n' })
  })
})
