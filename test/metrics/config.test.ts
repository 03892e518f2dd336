import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config/config.ts'
import { runServerProcessToExit } from '../support/server-process.ts'
import { createServer } from 'node:net'
import { tempDataDir } from '../support/harness.ts'

describe('METRICS_PORT and METRICS_HOST', () => {
  test('unset: no metrics; METRICS_HOST defaults to loopback', () => {
    expect(loadConfig({})).toMatchObject({ metricsPort: undefined, metricsHost: '127.0.0.1' })
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' })).toMatchObject({ metricsPort: 9464, metricsHost: '0.0.0.0' })
  })

  for (const [name, value] of [['METRICS_PORT', 'nine'], ['METRICS_PORT', '70000'], ['METRICS_PORT', ''], ['METRICS_HOST', ' ']]) {
    test(`${name}=${JSON.stringify(value)} stops start-up with a message naming it`, () => {
      expect(() => loadConfig({ [name!]: value })).toThrow(ConfigError)
      expect(() => loadConfig({ [name!]: value })).toThrow(name)
    })
  }

  test('the API port is never the metrics port', () => {
    expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow('METRICS_PORT must differ from PORT')
    // 0 picks a free port for each: never the same one.
    expect(loadConfig({ PORT: '0', METRICS_PORT: '0' })).toMatchObject({ port: 0, metricsPort: 0 })
  })

  test('a METRICS_PORT held by another process: exit 2 with one line naming it, before the data directory is touched', async () => {
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen({ host: '127.0.0.1', port: 0 }, resolve))
    const port = (holder.address() as { port: number }).port
    const { dir, cleanup } = tempDataDir()
    try {
      const { status, stderr } = await runServerProcessToExit({ PORT: '0', DATA_DIR: `${dir}/data`, METRICS_PORT: String(port) })
      expect(status).toBe(2)
      expect(stderr.trim().split('\n')).toHaveLength(1)
      expect(stderr).toContain(`METRICS_PORT ${port}`)
      expect(await Bun.file(`${dir}/data/control.sqlite`).exists()).toBe(false)
    } finally {
      holder.close()
      cleanup()
    }
  })
})
