import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { createApp } from '../../src/app.ts'
import { configWith } from '../../src/config/config.ts'
import { memoryLogger } from '../../src/logger.ts'
import { assertPortFree, isAddressInUse, PortInUseError } from '../../src/http/port-in-use.ts'
import { tempDataDir } from '../support/harness.ts'
import { runServerProcessToExit, startServerProcess } from '../support/server-process.ts'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
function dataDir(): string {
  const temp = tempDataDir()
  cleanups.push(temp.cleanup)
  return temp.dir
}

/** A listener of another program that would share its port (SO_REUSEPORT), as a production-mode Bun.serve does by default. */
function sharingListener() {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', development: false, reusePort: true, fetch: () => new Response('other program') })
  cleanups.push(() => server.stop(true))
  return server
}

/** Exit 2, nothing on stdout, one line on stderr that names the port; the second data directory untouched. */
function expectRefused(result: Awaited<ReturnType<typeof runServerProcessToExit>>, port: number, unusedDataDir: string) {
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.trim().split('\n')).toEqual([
    `PORT ${port} on 127.0.0.1 is already in use by another process: stop it, or set PORT to a free port (PORT=0 picks one)`,
  ])
  expect(existsSync(unusedDataDir)).toBe(false)
}

describe('a server started on a port already in use', () => {
  test('exits 2 with one line naming the port, and the first server keeps serving', async () => {
    const first = await startServerProcess({ DATA_DIR: dataDir() })
    cleanups.push(() => first.stop())
    const port = Number(new URL(first.base).port)
    const secondDataDir = join(dataDir(), 'second')

    expectRefused(await runServerProcessToExit({ DATA_DIR: secondDataDir, PORT: String(port) }), port, secondDataDir)
    expect(await (await fetch(`${first.base}/healthz`)).json()).toEqual({ status: 'ok' })
    expect(first.process.exitCode).toBeNull()
  })

  test('exits 2 when another program listens there, even one that allows sharing (SO_REUSEPORT)', async () => {
    const other = sharingListener()
    const unused = join(dataDir(), 'unused')
    expectRefused(await runServerProcessToExit({ DATA_DIR: unused, PORT: String(other.port) }), other.port!, unused)
    expect(await (await fetch(`http://127.0.0.1:${other.port}/`)).text()).toBe('other program')
  })
})

describe('assertPortFree', () => {
  test('rejects with PortInUseError on a listening port, of any kind', async () => {
    const plain = createServer()
    await new Promise<void>((resolve) => plain.listen({ port: 0, host: '127.0.0.1' }, resolve))
    cleanups.push(() => new Promise((resolve) => plain.close(resolve)))
    const plainPort = (plain.address() as { port: number }).port
    for (const port of [plainPort, sharingListener().port!]) {
      const error = await assertPortFree('127.0.0.1', port).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PortInUseError)
      expect((error as PortInUseError).port).toBe(port)
      expect((error as Error).message).toStartWith(`PORT ${port} on 127.0.0.1 is already in use`)
    }
  })

  test('resolves on a free port, and again right after (the probe let go of it)', async () => {
    const taken = Bun.serve({ port: 0, hostname: '127.0.0.1', reusePort: false, fetch: () => new Response('') })
    const port = taken.port!
    taken.stop(true)
    await assertPortFree('127.0.0.1', port)
    await assertPortFree('127.0.0.1', port)
    await assertPortFree('127.0.0.1', 0)
  })
})

test('the app listens without SO_REUSEPORT: it cannot join a port that another program shares', async () => {
  const other = sharingListener()
  const app = createApp({ config: configWith({ dataDir: dataDir(), host: '127.0.0.1' }), logger: memoryLogger('silent') })
  cleanups.push(() => app.close(0))
  let error: unknown
  try {
    app.listen(other.port)
  } catch (caught) {
    error = caught
  }
  expect(isAddressInUse(error)).toBe(true)
})
