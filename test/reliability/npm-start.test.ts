import { expect, test } from 'bun:test'
import { tempDataDir } from '../support/harness.ts'
import { eventually } from '../support/raw-http.ts'

test('npm start: SIGTERM sent to npm reaches the server, which drains and exits', async () => {
  const temp = tempDataDir()
  const child = Bun.spawn(['npm', 'start'], {
    env: { ...process.env, DATA_DIR: temp.dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdout: 'pipe',
    stderr: 'ignore',
  })
  let output = ''
  const decoder = new TextDecoder()
  const reader = child.stdout.getReader()
  const pump = (async () => {
    for (let read = await reader.read(); !read.done; read = await reader.read()) output += decoder.decode(read.value)
  })()
  try {
    await eventually(() => output.includes('"event":"listening"'), 30_000, 'the server to listen')
    child.kill('SIGTERM') // npm's own process, as a service manager would signal it
    expect(await child.exited).toBe(0)
    await pump
    expect(output).toContain('"event":"shutdown_complete"')
  } finally {
    child.kill('SIGKILL')
    temp.cleanup()
  }
}, 60_000)
