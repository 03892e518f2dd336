import { afterEach, beforeEach, expect, test } from 'bun:test'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { shellSnippet } from '../support/doc-snippet.ts'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from '../support/harness.ts'

/**
 * The `curl` + `jq` loader of docs/api.md, run as a reader would: `sh` with real curl and jq,
 * against a server whose minute window is 2 requests, so that its third page is refused 429.
 * Time is the server's manual clock: the script's `sleep` is a stand-in on PATH that moves
 * that clock by the seconds asked (and records them) instead of waiting.
 */

/** Whether curl and jq are here; without them the test is skipped with a warning, and fails in CI (which installs them). */
function shellToolsAvailable(): boolean {
  if (Bun.which('curl') && Bun.which('jq')) return true
  if (process.env.CI === 'true') throw new Error('curl and jq are not installed: CI installs them with scripts/install-shell-tools.sh')
  console.warn('warning: curl or jq is not installed here; the test of the docs loader is skipped (scripts/install-shell-tools.sh)')
  return false
}
const run = shellToolsAvailable() ? test : test.skip

let server: TestServer
let work: string
let clockControl: ReturnType<typeof Bun.serve>
const slept: number[] = []

beforeEach(async () => {
  server = await startServer({ rateLimitPerMinute: 2 })
  work = mkdtempSync(join(tmpdir(), 'qa-loader-'))
  slept.length = 0
  clockControl = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const seconds = Number(new URL(request.url).searchParams.get('seconds'))
      slept.push(seconds)
      server.clock.advance(seconds * 1000)
      return new Response('ok')
    },
  })
  writeFileSync(join(work, 'sleep'), `#!/bin/sh\ncurl -sS "http://127.0.0.1:${clockControl.port}/?seconds=$1" > /dev/null\n`)
  chmodSync(join(work, 'sleep'), 0o755)
})
afterEach(async () => {
  clockControl.stop(true)
  await server.close()
  rmSync(work, { recursive: true, force: true })
})

async function runLoader(token: string) {
  const child = Bun.spawn(['sh', '-c', shellSnippet('docs/api.md', '#### In `curl` and `jq`')], {
    cwd: work,
    env: { ...process.env, PATH: `${work}:${process.env.PATH}`, BASE: server.base, API_TOKEN: token },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { stdout, stderr, status }
}

run('the docs loader waits Retry-After on a 429 and finishes its run, then its next run loads only the changes', async () => {
  // 1,200 tickets of the last days (the script asks for the trailing 89 days of the real date): three pages of 500.
  const start = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10)
  const { token } = server.seeded({ bulk: { count: 1200, start, everySeconds: 60 } })

  const first = await runLoader(token)
  expect(first).toMatchObject({ status: 0, stdout: '1200 tickets inserted or changed; 1200 in the copy\n' })
  // Pages 1 and 2 fill the window of 2; page 3 is refused and asked again after Retry-After.
  expect(slept).toHaveLength(1)
  expect(slept[0]).toBeGreaterThanOrEqual(1)
  expect(first.stderr).toBe(`rate limited; waiting ${slept[0]} s\n`)
  expect(Object.keys(JSON.parse(readFileSync(join(work, 'tickets.json'), 'utf8')))).toHaveLength(1200)

  // The next run passes the token it kept: nothing changed since, so one page and no rows.
  const second = await runLoader(token)
  expect(second).toEqual({ status: 0, stdout: '0 tickets inserted or changed; 1200 in the copy\n', stderr: '' })
})

run('an error other than the minute window ends the run with the error body', async () => {
  const { token } = server.seeded()
  const result = await runLoader(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'))
  expect(result.status).toBe(1)
  expect(JSON.parse(result.stderr)).toMatchObject({ error: 'unauthorized' })
  expect(slept).toEqual([])
})
