import { expect, test } from 'bun:test'

/** bench/rolling-restart.ts refuses bad options with one line and exit status 2, before it starts anything. */
for (const args of [['--typo'], ['--seconds'], ['--seconds', '0'], ['--seconds', '121'], ['--reloads', 'x'], ['--workers', '1.5']]) {
  test(`${args.join(' ')}: one line, exit 2`, async () => {
    const child = Bun.spawn([process.execPath, 'bench/rolling-restart.ts', ...args], { stdout: 'pipe', stderr: 'pipe' })
    const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()])
    expect(status).toBe(2)
    expect(stdout).toBe('')
    const lines = stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toStartWith('usage: bun bench/rolling-restart.ts')
  })
}
