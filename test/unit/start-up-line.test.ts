import { describe, expect, test } from 'bun:test'
import { configWith } from '../../src/config/config.ts'
import { changedSettings } from '../../src/config/changed-settings.ts'
import { announceStart } from '../../src/server/start-line.ts'
import { invokedAs } from '../../src/cli/invoked-as.ts'
import type { LogLevel } from '../../src/config/config.ts'

describe('the settings the start-up line shows', () => {
  test('only those that differ from their defaults; no path of the data directory, no Redis password', () => {
    expect(changedSettings(configWith({}))).toEqual({})
    const config = configWith({ port: 8080, dataDir: '/srv/queue-api', redisUrl: 'redis://user:s3cret@redis.internal:6380/2?x=1', workers: 2, readOnly: true, sampleData: 'off' })
    expect(changedSettings(config)).toEqual({ PORT: 8080, DATA_DIR: 'set', REDIS_URL: 'redis://redis.internal:6380/2', WORKERS: 2, READ_ONLY: true, SAMPLE_DATA: 'off' })
  })
})

describe('announceStart', () => {
  const lines = (level: LogLevel, migrateReq: boolean | undefined) => {
    const written: string[] = []
    announceStart(configWith({ logLevel: level }), (line) => written.push(line), 'http://127.0.0.1:3000', migrateReq)
    return written.map((line) => JSON.parse(line).event)
  }

  test('started at every level but silent; the host hint only while tcp_migrate_req is 0', () => {
    for (const level of ['debug', 'info', 'warn', 'error'] as const) {
      expect({ level, events: lines(level, false) }).toEqual({ level, events: ['started', 'tcp_migrate_req_off'] })
      expect({ level, events: lines(level, true) }).toEqual({ level, events: ['started'] })
      expect({ level, events: lines(level, undefined) }).toEqual({ level, events: ['started'] })
    }
    expect(lines('silent', false)).toEqual([])
  })
})

describe('invokedAs', () => {
  test('the compiled file, npm\'s scripts, Bun on the file', () => {
    expect(invokedAs('admin', {}, true)).toBe('queue-api admin')
    expect(invokedAs('serve', {}, true)).toBe('queue-api')
    expect(invokedAs('admin', { npm_lifecycle_event: 'admin' }, false)).toBe('npm run -s admin --')
    expect(invokedAs('serve', { npm_lifecycle_event: 'start' }, false)).toBe('npm start --')
    // Under another script (npm test running a test), not the command's own.
    expect(invokedAs('admin', { npm_lifecycle_event: 'test' }, false)).toBe('bun src/cli/admin.ts')
  })
})
