import { afterEach, beforeEach, expect, test } from 'bun:test'
import { copyFileSync, closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { tempDataDir } from '../support/harness.ts'
import { startServerProcess, type ServerProcess } from '../support/server-process.ts'

/**
 * control.sqlite replaced or broken under a running server process (docs/operations.md#restoring-controlsqlite):
 * a restore by copy and rename is read before the next answer, a broken file is 503 and not
 * ready, a good file put back is served again.
 */

let dataDir: string
let cleanup: () => void
let server: ServerProcess | undefined
/** A control.sqlite as a backup would hold it: the first token revoked there, a third one made there. */
let restored: string
const tokens: Record<'first' | 'second' | 'third', string> = { first: '', second: '', third: '' }

beforeEach(() => {
  ;({ dir: dataDir, cleanup } = tempDataDir())
  const now = new Date().toISOString()
  const store = new ControlStore(dataDir)
  const org = createOrganisationWithTenant(store, { name: 'Restored', plan: 'paid', apiEnabled: true, now: Date.now() })
  const first = store.createToken({ organisationId: org.id, name: 'first', createdAt: now })
  tokens.first = first.token
  tokens.second = store.createToken({ organisationId: org.id, name: 'second', createdAt: now }).token
  store.close()

  // The backup, taken as docs/operations.md says (VACUUM INTO: one consistent file, WAL
  // included), then changed in another directory.
  const backupDir = join(dataDir, 'backup')
  mkdirSync(backupDir)
  backUp(join(dataDir, 'control.sqlite'), join(backupDir, 'control.sqlite'))
  const backup = new ControlStore(backupDir)
  backup.revokeToken(first.record.id, now)
  tokens.third = backup.createToken({ organisationId: org.id, name: 'third', createdAt: now }).token
  backup.close()
  restored = join(backupDir, 'control.sqlite.backup')
  backUp(join(backupDir, 'control.sqlite'), restored)
})
afterEach(async () => {
  await server?.stop()
  server = undefined
  cleanup()
})

async function status(path: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(server!.base + path, token ? { headers: { Authorization: `Bearer ${token}` } } : {})
  expect(response.headers.get('content-type')).toStartWith('application/json')
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}
const queues = (token: string) => status('/v1/queues', token).then((r) => r.status)

/** VACUUM INTO: one consistent file, whatever its WAL still holds. */
function backUp(from: string, to: string): void {
  const db = new Database(from)
  db.exec(`VACUUM INTO '${to}'`)
  db.close()
}

/** A restore by copy: the backup copied beside the file, then renamed over it (a new inode). */
function restoreByCopy(): void {
  const target = join(dataDir, 'control.sqlite')
  const before = statSync(target).ino
  copyFileSync(restored, `${target}.restoring`)
  renameSync(`${target}.restoring`, target)
  expect(statSync(target).ino).not.toBe(before)
}

/** Overwrites bytes of control.sqlite in place (same inode), as a failing disk or a careless tool would. */
function breakInPlace(offset: number, length: number): void {
  // Its log written into it first, so that SQLite reads the broken bytes, not a newer copy of
  // the same pages in the WAL.
  const db = new Database(join(dataDir, 'control.sqlite'))
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  db.close()
  const fd = openSync(join(dataDir, 'control.sqlite'), 'r+')
  writeSync(fd, Buffer.alloc(length, 0x5a), 0, length, offset)
  closeSync(fd)
}

test('a control.sqlite restored by copy is read before the next answer: its revocation holds, its new token works', async () => {
  server = await startServerProcess({ DATA_DIR: dataDir })
  expect(await queues(tokens.first)).toBe(200)
  expect(await queues(tokens.third)).toBe(401)

  restoreByCopy()
  expect(await queues(tokens.first)).toBe(401)
  expect(await queues(tokens.third)).toBe(200)
  expect(await queues(tokens.second)).toBe(200)
  expect((await status('/readyz')).status).toBe(200)
})

test('a control.sqlite broken in place is 503 data_unavailable and not ready; a good file put back is served again', async () => {
  server = await startServerProcess({ DATA_DIR: dataDir })
  expect(await queues(tokens.second)).toBe(200)

  // Its header: not a database any more (SQLITE_NOTADB).
  breakInPlace(0, 100)
  const refused = await status('/v1/queues', tokens.second)
  expect(refused).toMatchObject({ status: 503, body: { error: 'data_unavailable' } })
  expect(JSON.stringify(refused.body)).not.toMatch(/SQLITE|control\.sqlite|\//)
  expect(await status('/readyz')).toMatchObject({ status: 503, body: { error: 'data_unavailable' } })

  restoreByCopy()
  expect(await queues(tokens.second)).toBe(200)
  expect(await queues(tokens.third)).toBe(200)
  expect((await status('/readyz')).status).toBe(200)

  // Its pages, the header intact (SQLITE_CORRUPT when the tokens are read).
  breakInPlace(4096, statSync(join(dataDir, 'control.sqlite')).size - 4096)
  expect(await status('/v1/queues', tokens.second)).toMatchObject({ status: 503, body: { error: 'data_unavailable' } })
  expect((await status('/readyz')).status).toBe(503)

  restoreByCopy()
  expect(await queues(tokens.second)).toBe(200)
  expect((await status('/readyz')).status).toBe(200)
  // Nothing of it is a 500: the server logged no unexpected error.
  expect(server.output()).not.toContain('"status":500')
})

test('a control.sqlite removed, or empty (a copy under way), is 503 and never made anew by the server; the restored file is served', async () => {
  server = await startServerProcess({ DATA_DIR: dataDir })
  expect(await queues(tokens.second)).toBe(200)
  const target = join(dataDir, 'control.sqlite')

  rmSync(target)
  expect(await status('/v1/queues', tokens.second)).toMatchObject({ status: 503, body: { error: 'data_unavailable' } })
  expect((await status('/readyz')).status).toBe(503)
  expect(existsSync(target)).toBe(false)

  writeFileSync(target, '')
  expect(await status('/v1/queues', tokens.second)).toMatchObject({ status: 503, body: { error: 'data_unavailable' } })
  expect(statSync(target).size).toBe(0)

  restoreByCopy()
  expect(await queues(tokens.second)).toBe(200)
  expect((await status('/readyz')).status).toBe(200)
})
