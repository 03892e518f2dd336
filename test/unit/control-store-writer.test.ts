import { afterEach, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { utimesSync } from 'node:fs'
import { ControlStore } from '../../src/control/store.ts'
import { tempDataDir } from '../support/harness.ts'
import { eventually } from '../support/raw-http.ts'

/**
 * The control store reopens control.sqlite when the file's identity changes (a restore), and
 * another process's WAL checkpoint changes it too. These check that such a reopen never closes
 * a connection that is still in use.
 */

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function dataDir(): string {
  const { dir, cleanup } = tempDataDir()
  cleanups.push(cleanup)
  return dir
}

/** Another process writing to control.sqlite and checkpointing after every write, until killed. */
function startWriter(path: string) {
  const script = `
    const { Database } = require('bun:sqlite')
    const db = new Database(${JSON.stringify(path)})
    db.exec('PRAGMA busy_timeout = 5000')
    let n = 0
    for (;;) {
      db.run("INSERT INTO demo_quota_usage (organisation_id, day, count) VALUES ('org_writer', ?, 1)", ['d' + n++])
      db.exec('PRAGMA wal_checkpoint(PASSIVE)')
    }`
  return Bun.spawn([process.execPath, '-e', script], { stdout: 'ignore', stderr: 'pipe' })
}

test('opening the store while another process writes and checkpoints never uses a connection it closed', async () => {
  const dir = dataDir()
  new ControlStore(dir).close()
  const path = join(dir, 'control.sqlite')
  const writer = startWriter(path)
  const probe = new Database(path, { readonly: true })
  const rows = () => (probe.query('SELECT count(*) AS n FROM demo_quota_usage').get() as { n: number }).n
  try {
    // The writer's first rows: its checkpoints now change the file under every open below.
    await eventually(() => rows() >= 10, 10_000, 'the writer process to write')
    const before = rows()
    for (let i = 0; i < 300; i++) new ControlStore(dir).close()
    // It wrote all along: the opens above raced its checkpoints, not an idle file.
    expect(writer.exitCode).toBeNull()
    expect(rows()).toBeGreaterThan(before)
  } finally {
    probe.close()
    writer.kill()
    await writer.exited
  }
})

test('a file changed under an open transaction keeps that transaction on its connection; the next use opens the file again', () => {
  const dir = dataDir()
  const store = new ControlStore(dir)
  try {
    const path = join(dir, 'control.sqlite')
    const organisation = store.createOrganisation({ name: 'Org', slug: 'org', plan: 'paid', apiEnabled: true, createdAt: new Date(0).toISOString() })
    const created = store.db.transaction(() => {
      // What another process's checkpoint does to the file while this one holds the write lock.
      const later = new Date(Date.now() + 60_000)
      utimesSync(path, later, later)
      return store.createToken({ organisationId: organisation.id, name: 'in a transaction', createdAt: new Date(0).toISOString() })
    }).immediate()
    expect(store.findToken(created.record.id)?.name).toBe('in a transaction')
    expect(store.listTokens(organisation.id)).toHaveLength(1)
  } finally {
    store.close()
  }
})
