import { describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { adminOnFreshDataDir } from '../support/admin-cli.ts'
import { openTenant } from '../support/harness.ts'
import { startServerProcess } from '../support/server-process.ts'
import { migrate } from '../../src/db/migrator.ts'
import { TENANT_MIGRATIONS, TENANT_SCHEMA_VERSION } from '../../src/tenant/migrations.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { redisAvailable, startRedis } from '../support/redis-server.ts'

/** At start, one line sums up the tenant files by schema version and names the ones to act on. */

const fresh = adminOnFreshDataDir(Date.now())
const { admin } = fresh

async function startUpLine(env: Record<string, string> = {}) {
  const server = await startServerProcess({ DATA_DIR: fresh.dataDir, ...env })
  await server.stop()
  const lines = server.output().split('\n').filter((line) => line.includes('"event":"tenant_schemas"'))
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!)
}

describe('the start-up line tenant_schemas', () => {
  test('every file current: an info line with the count at each version', async () => {
    admin('org', 'create', '--name', 'One')
    admin('org', 'create', '--name', 'Two')
    const line = await startUpLine()
    expect(line).toMatchObject({ level: 'info', current: TENANT_SCHEMA_VERSION, files: { [TENANT_SCHEMA_VERSION]: 2 } })
    expect(Object.keys(line)).not.toContain('needMigrate')
  })

  test('older, newer and missing files: a warning naming each', async () => {
    admin('org', 'create', '--name', 'Current')
    const older = admin('org', 'create', '--name', 'Older', '--json').json()
    const newer = admin('org', 'create', '--name', 'Newer', '--json').json()
    const missing = admin('org', 'create', '--name', 'Missing', '--json').json()
    const db = openTenant(fresh.dataDir, older.id)
    migrate(db, TENANT_MIGRATIONS, 3)
    db.close()
    const future = openTenant(fresh.dataDir, newer.id)
    future.exec(`PRAGMA user_version = ${TENANT_SCHEMA_VERSION + 1}`)
    future.close()
    rmSync(tenantFilePath(fresh.dataDir, missing.id))

    const line = await startUpLine()
    expect(line).toMatchObject({
      level: 'warn',
      current: TENANT_SCHEMA_VERSION,
      files: { 3: 1, [TENANT_SCHEMA_VERSION]: 1, [TENANT_SCHEMA_VERSION + 1]: 1 },
      needMigrate: 1,
      needMigrateNamed: [`${older.id} (older)`],
      fix: 'admin migrate',
      newer: 1,
      newerNamed: [`${newer.id} (newer)`],
      unreadable: 1,
      unreadableNamed: [`${missing.id} (missing)`],
    })
  })

  test.if(redisAvailable())('WORKERS=2: one line, the parent\'s, not one per worker', async () => {
    admin('org', 'create', '--name', 'Shared')
    const redis = await startRedis()
    try {
      const line = await startUpLine({ WORKERS: '2', REDIS_URL: redis.url })
      expect(line).toMatchObject({ level: 'info', files: { [TENANT_SCHEMA_VERSION]: 1 } })
      expect(line.worker).toBeUndefined()
    } finally {
      await redis.stop()
    }
  })
})
