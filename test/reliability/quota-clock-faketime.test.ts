import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { tempDataDir } from '../support/harness.ts'
import { startServerProcess, type ServerProcess } from '../support/server-process.ts'

/**
 * The demo quota across steps of the real wall clock of a real server process
 * (docs/api.md#the-demo-quota): the process runs under libfaketime (Debian's `faketime`), whose
 * offset a file sets and the process reads anew at every clock call, while its monotonic clock
 * runs untouched. Without libfaketime these tests skip with a warning; in CI (CI=true) they
 * fail, since CI installs it (scripts/install-faketime.sh).
 */
const library = ['x86_64-linux-gnu', 'aarch64-linux-gnu']
  .map((arch) => `/usr/lib/${arch}/faketime/libfaketime.so.1`)
  .find((path) => existsSync(path))

function faketimeAvailable(): boolean {
  if (library) return true
  if (process.env.CI === 'true') throw new Error('libfaketime is not installed: CI installs it with scripts/install-faketime.sh')
  console.warn('warning: libfaketime is not installed here; the faketime tests are skipped (apt-get install faketime, or scripts/install-faketime.sh)')
  return false
}

const DAY_S = 86_400

describe.skipIf(!faketimeAvailable())('the demo quota under a stepped wall clock (libfaketime)', () => {
  const data = tempDataDir()
  const spec = join(data.dir, '..', `faketime-${process.pid}-${Date.now()}`)
  let token = ''
  let server: ServerProcess | undefined
  // Noon UTC of today, so that no real midnight falls inside the test.
  const nowS = Math.floor(Date.now() / 1000)
  const toNoon = Math.floor(nowS / DAY_S) * DAY_S + DAY_S / 2 - nowS
  /** Sets the server's wall clock to noon of today plus `days` (libfaketime's offset in seconds). */
  const setDays = (days: number) => {
    const offset = toNoon + days * DAY_S
    writeFileSync(spec, `${offset < 0 ? '-' : '+'}${Math.abs(offset)}\n`)
  }
  const start = () =>
    startServerProcess({
      DATA_DIR: data.dir,
      DEMO_DAILY_QUOTA: '3',
      LD_PRELOAD: library!,
      FAKETIME_TIMESTAMP_FILE: spec,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    })
  const ask = async () => {
    const response = await fetch(`${server!.base}/v1/queues`, { headers: { Authorization: `Bearer ${token}` } })
    await response.arrayBuffer()
    return { status: response.status, day: /"day";r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1] }
  }

  beforeAll(() => {
    const store = new ControlStore(data.dir)
    const org = createOrganisationWithTenant(store, { name: 'Faketime demo', plan: 'demo', apiEnabled: true, now: Date.now() })
    token = store.createToken({ organisationId: org.id, name: 'faketime', createdAt: new Date().toISOString() }).token
    store.close()
    setDays(0)
  })
  afterAll(async () => {
    await server?.stop()
    data.cleanup()
    Bun.spawnSync(['rm', '-f', spec])
  })

  test('used up, the clock two days ahead, then put right: the day stays used up, also across a restart while ahead', async () => {
    server = await start()
    for (let i = 0; i < 3; i++) expect(await ask()).toEqual({ status: 200, day: String(2 - i) })
    expect(await ask()).toEqual({ status: 429, day: '0' })

    setDays(2)
    expect(await ask()).toEqual({ status: 200, day: '2' }) // the day the wall clock says
    setDays(0)
    expect(await ask()).toEqual({ status: 429, day: '0' })

    setDays(2)
    await server.stop()
    server = await start()
    expect(await ask()).toEqual({ status: 200, day: '1' })
    setDays(0)
    expect(await ask()).toEqual({ status: 429, day: '0' })
  })
})
