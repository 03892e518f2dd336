import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { ConfigError, loadConfig, SETTINGS } from '../../src/config/config.ts'

describe('loadConfig', () => {
  test('defaults work on a fresh machine', () => {
    expect(loadConfig({})).toMatchObject({ port: 3000, host: '127.0.0.1', dataDir: './data', rateLimitPerMinute: 60, demoDailyQuota: 50, logLevel: 'info' })
  })

  test('values from the environment', () => {
    const config = loadConfig({ PORT: '8080', DATA_DIR: '/srv/qa', RATE_LIMIT_PER_MINUTE: '120', DEMO_DAILY_QUOTA: '10', TENANT_CACHE_SIZE: '8', LOG_LEVEL: 'WARN' })
    expect(config).toMatchObject({ port: 8080, dataDir: '/srv/qa', rateLimitPerMinute: 120, demoDailyQuota: 10, tenantCacheSize: 8, logLevel: 'warn' })
  })

  const invalid: [string, string][] = [
    ['PORT', 'eighty'], ['PORT', '70000'], ['PORT', '-1'], ['RATE_LIMIT_PER_MINUTE', '0'], ['DEMO_DAILY_QUOTA', '1.5'],
    ['TENANT_CACHE_SIZE', ''], ['LOG_LEVEL', 'loud'], ['DATA_DIR', ' '], ['HOST', ''], ['EXPORT_STALL_TIMEOUT_MS', '10'],
    ['REDIS_URL', ''], ['REDIS_URL', 'localhost:6379'], ['REDIS_URL', 'http://localhost:6379'], ['WORKERS', '0'], ['WORKERS', 'two'],
    ['READ_ONLY', 'yes'], ['READ_ONLY', ''],
  ]
  for (const [name, value] of invalid) {
    test(`${name}=${JSON.stringify(value)} stops start-up with a message naming it`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
      expect(() => loadConfig({ [name]: value })).toThrow(name)
    })
  }

  test('REDIS_URL and WORKERS: unset means one process with the embedded limits', () => {
    expect(loadConfig({})).toMatchObject({ redisUrl: undefined, workers: 1 })
    expect(loadConfig({ REDIS_URL: 'redis://:secret@127.0.0.1:6380/2', WORKERS: '4' })).toMatchObject({ redisUrl: 'redis://:secret@127.0.0.1:6380/2', workers: 4 })
  })

  test('WORKERS above 1 without REDIS_URL stops start-up and says why', () => {
    expect(() => loadConfig({ WORKERS: '2' })).toThrow(ConfigError)
    expect(() => loadConfig({ WORKERS: '2' })).toThrow('WORKERS=2 needs REDIS_URL')
  })

  test('READ_ONLY=1 without REDIS_URL stops start-up and says why; with it, the service is read-only', () => {
    expect(loadConfig({}).readOnly).toBe(false)
    expect(() => loadConfig({ READ_ONLY: '1' })).toThrow('READ_ONLY=1 needs REDIS_URL')
    expect(loadConfig({ READ_ONLY: '1', REDIS_URL: 'redis://127.0.0.1:6379' }).readOnly).toBe(true)
    expect(loadConfig({ READ_ONLY: '0' }).readOnly).toBe(false)
  })

  test('a bad REDIS_URL is named without repeating it (it may hold a password)', () => {
    for (const value of ['redis//:hunter2@host', 'http://:hunter2@host:6379']) {
      let message = ''
      try {
        loadConfig({ REDIS_URL: value })
      } catch (error) {
        message = String(error)
      }
      expect(message).toContain('REDIS_URL')
      expect(message).not.toContain('hunter2')
    }
  })

  test('every setting is documented in the README with its default', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    for (const setting of SETTINGS) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${setting.env}\``))
      expect(row, `README row for ${setting.env}`).toBeDefined()
      // A setting whose default is to be unset shows "(unset)".
      expect(row!).toContain(setting.default === undefined ? '(unset)' : `\`${String(setting.default)}\``)
    }
  })
})
