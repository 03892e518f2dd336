import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { chmodSync, chownSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../../src/control/store.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { openTenant, startServer, tempDataDir, type TestServer } from '../support/harness.ts'
import { writeStructure, writeTickets, standardTickets } from '../support/fixtures.ts'
import { runServerProcessToExit, startServerProcess } from '../support/server-process.ts'

/**
 * The data directory is trusted only when it is ours (docs/operations.md#trusted-only-when-it-is-ours):
 * the attacks of a local user who could plant files in it, or links, each refused with one line
 * and exit 2 at start and by admin, and as 503 for a tenant file met later. The planting is done
 * as `nobody` (setpriv), the way another local account would; root's admin becomes the owner of
 * a directory it does not own.
 */
const ROOT = join(import.meta.dir, '../..')
const isRoot = process.getuid?.() === 0
const NOBODY = 65534
const asNobody = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups']

let work: { dir: string; cleanup: () => void }
beforeAll(() => {
  work = tempDataDir()
  // nobody may reach what the tests make below, nothing more
  chmodSync(work.dir, 0o755)
  // where every local user may make files, as in /tmp
  mkdirSync(join(work.dir, 'shared'))
  chmodSync(join(work.dir, 'shared'), 0o1777)
})
afterAll(() => work.cleanup())

let counter = 0
const place = (name: string) => join(work.dir, `${name}-${++counter}`)
/** A path in the directory every user may write, like /tmp. */
const shared = (name: string) => join(work.dir, 'shared', `${name}-${++counter}`)

function admin(dataDir: string, argv: string[], options: { as?: string[] } = {}) {
  const run = Bun.spawnSync([...(options.as ?? []), process.execPath, 'src/cli/admin.ts', ...argv], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATA_DIR: dataDir, TMPDIR: '/tmp' },
  })
  return { status: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() }
}

function shAsNobody(script: string): void {
  const run = Bun.spawnSync([...asNobody, 'sh', '-ec', script], { env: { PATH: '/usr/bin:/bin' } })
  if (run.exitCode !== 0) throw new Error(`as nobody: ${run.stderr.toString()}`)
}

/** A SQLite file of another application: one table, mode 0644. */
function foreignDatabase(path: string): string {
  const db = new Database(path)
  db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('not yours')")
  db.close()
  chmodSync(path, 0o644)
  return readFileSync(path).toString('base64')
}

const oneLine = (text: string) => text.trim().split('\n')

/**
 * A server of the test's own, closed however `body` ends; its directory is made 0700 again first,
 * as a test may have opened it to nobody (mkdtemp makes it 0700: a no-op for the others).
 */
async function withServer(body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startServer()
  try {
    await body(server)
  } finally {
    chmodSync(server.dataDir, 0o700)
    await server.close()
  }
}

describe.if(isRoot)('a data directory another user made', () => {
  test('0777, made by nobody before the first start, control.sqlite a link out of it: root\'s admin and server refuse, nothing written at the target', async () => {
    const dir = shared('planted')
    const target = place('target.sqlite')
    shAsNobody(`mkdir -m 0777 ${dir}; ln -s ${target} ${dir}/control.sqlite`)
    chmodSync(dir, 0o777) // whatever nobody's umask was
    const run = admin(dir, ['org', 'create', '--name', 'Acme'])
    expect(run.status).toBe(2)
    expect(oneLine(run.stderr)).toEqual([`admin: DATA_DIR ${dir} is writable by others than its owner (mode 0777): another user may have put files in it; check them, then chmod 0700 ${dir}`])
    expect(existsSync(target)).toBe(false)
    expect(statSync(dir).mode & 0o777).toBe(0o777)

    const server = await runServerProcessToExit({ DATA_DIR: dir, PORT: '0' })
    expect(server.status).toBe(2)
    expect(oneLine(server.stderr)).toEqual([`DATA_DIR ${dir} belongs to user nobody (uid ${NOBODY}), not to user root (uid 0) running this: run it as its owner, or make that user its owner (chown -R), or set DATA_DIR to a directory it owns`])
    expect(server.stdout).toBe('')
    expect(existsSync(target)).toBe(false)

    // Made private by nobody: root's admin runs as nobody, and still follows no link.
    chmodSync(dir, 0o700)
    const again = admin(dir, ['org', 'create', '--name', 'Acme'])
    expect(again.status).toBe(2)
    expect(oneLine(again.stderr)).toEqual([`admin: ${dir}/control.sqlite is a symbolic link: put the service's own file there (owned by user nobody (uid ${NOBODY}), mode 0600, one name) or remove ${dir}/control.sqlite`])
    expect(existsSync(target)).toBe(false)
  })

  test('a DATA_DIR that is a link made by nobody is refused; one of root\'s (systemd\'s StateDirectory under DynamicUser) is followed', () => {
    const real = place('real')
    mkdirSync(real, { mode: 0o700 })
    const nobodys = shared('nobodys-link')
    shAsNobody(`ln -s ${real} ${nobodys}`)
    const refused = admin(nobodys, ['org', 'list'])
    expect(refused.status).toBe(2)
    expect(oneLine(refused.stderr)).toEqual([`admin: DATA_DIR ${nobodys} is a symbolic link made by user nobody (uid ${NOBODY}): only a link of root's or of user root (uid 0) is followed; set DATA_DIR to the directory itself`])
    const roots = place('roots-link')
    symlinkSync(real, roots)
    expect(admin(roots, ['org', 'list'])).toMatchObject({ status: 0, stdout: 'no organisations\n' })
  })
})

describe.if(isRoot)('root running admin on the service\'s directory (owned by another uid)', () => {
  test('runs as its owner: every file it makes is the service\'s, which then serves it', async () => {
    const dir = place('service')
    mkdirSync(dir, { mode: 0o700 })
    chownSync(dir, NOBODY, NOBODY)
    const created = admin(dir, ['org', 'create', '--name', 'Acme', '--slug', 'acme'])
    expect(created).toMatchObject({ status: 0, stderr: '' })
    const token = JSON.parse(admin(dir, ['token', 'create', '--org', 'acme', '--name', 'ci', '--json']).stdout).token as string
    const files = ['control.sqlite', ...Bun.spawnSync(['ls', join(dir, 'orgs')]).stdout.toString().trim().split('\n').map((name) => `orgs/${name}`)]
    expect(files.length).toBeGreaterThan(1)
    for (const file of files) {
      const stats = statSync(join(dir, file))
      expect({ file, uid: stats.uid, gid: stats.gid, mode: stats.mode & 0o777 }).toEqual({ file, uid: NOBODY, gid: NOBODY, mode: 0o600 })
    }
    // The service, as nobody, reads what root's admin made.
    const server = await startServerProcess({ DATA_DIR: dir }, { argv: [...asNobody, process.execPath, join(ROOT, 'src/main.ts')], cwd: ROOT })
    try {
      const answer = await fetch(`${server.base}/v1/queues`, { headers: { Authorization: `Bearer ${token}` } })
      expect(answer.status).toBe(200)
    } finally {
      await server.stop()
    }
  })

  test('an owner who cannot reach the directory from here (DynamicUser= keeps it under root\'s 0700 private/): one line with the command to run admin as the unit does', () => {
    const parent = place('private')
    mkdirSync(parent, { mode: 0o700 })
    const dir = join(parent, 'queue-api')
    mkdirSync(dir, { mode: 0o700 })
    chownSync(dir, NOBODY, NOBODY)
    const link = place('queue-api')
    symlinkSync(dir, link)
    const run = admin(link, ['org', 'list'])
    expect(run.status).toBe(2)
    const lines = oneLine(run.stderr)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toStartWith(`admin: DATA_DIR ${link} belongs to user nobody (uid ${NOBODY}), whom root's admin runs as, but who cannot reach it from here (EACCES): run admin as the service does, e.g. under the systemd unit: systemd-run --pipe --wait --quiet -p DynamicUser=yes -p User=queue-api -p StateDirectory=queue-api `)
  })
})

describe('links and other users\' files in a data directory of ours', () => {
  test('admin migrate onto a tenant file linked to another application\'s database: exit 2, one line, that file untouched', () => {
    const dir = place('migrate')
    const store = new ControlStore(dir)
    const org = createOrganisationWithTenant(store, { name: 'Acme', plan: 'paid', apiEnabled: true, now: Date.now() })
    store.close()
    const foreign = place('foreign.sqlite')
    const before = foreignDatabase(foreign)
    const path = tenantFilePath(dir, org.id)
    rmSync(path)
    symlinkSync(foreign, path)
    const run = admin(dir, ['migrate'])
    expect(run.status).toBe(2)
    expect(oneLine(run.stderr)).toEqual([`admin: ${path} is a symbolic link: put the service's own file there (owned by user root (uid 0), mode 0600, one name) or remove ${path}`])
    expect(readFileSync(foreign).toString('base64')).toBe(before)
    expect(statSync(foreign).mode & 0o777).toBe(0o644)
  })

  test('control.sqlite linked to another application\'s 0644 database: admin and the server refuse, the database unchanged and still 0644', async () => {
    const dir = place('control-link')
    mkdirSync(dir, { mode: 0o700 })
    const foreign = place('app.sqlite')
    const before = foreignDatabase(foreign)
    symlinkSync(foreign, join(dir, 'control.sqlite'))
    const run = admin(dir, ['org', 'list'])
    expect(run.status).toBe(2)
    expect(oneLine(run.stderr)).toHaveLength(1)
    expect(run.stderr).toStartWith(`admin: ${dir}/control.sqlite is a symbolic link: `)
    const server = await runServerProcessToExit({ DATA_DIR: dir, PORT: '0' })
    expect({ status: server.status, stdout: server.stdout }).toEqual({ status: 2, stdout: '' })
    expect(oneLine(server.stderr)).toEqual([`${dir}/control.sqlite is a symbolic link: put the service's own file there (owned by user root (uid 0), mode 0600, one name) or remove ${dir}/control.sqlite`])
    expect(readFileSync(foreign).toString('base64')).toBe(before)
    expect(statSync(foreign).mode & 0o777).toBe(0o644)
  })

  test('a hard link (another name of a file elsewhere) is refused like a symbolic one', () => {
    const dir = place('hardlink')
    const store = new ControlStore(dir)
    const org = createOrganisationWithTenant(store, { name: 'Acme', plan: 'paid', apiEnabled: true, now: Date.now() })
    store.close()
    const path = tenantFilePath(dir, org.id)
    linkSync(path, place('elsewhere.sqlite'))
    const run = admin(dir, ['org', 'list'])
    expect(run.status).toBe(2)
    expect(oneLine(run.stderr)).toEqual([`admin: ${path} has 2 names (a hard link): put the service's own file there (owned by user root (uid 0), mode 0600, one name) or remove ${path}`])
  })

  test('a 0666 control.sqlite and a 0644 tenant file of ours are made 0600; a 0755 directory 0700', () => {
    const dir = place('wide')
    const store = new ControlStore(dir)
    const org = createOrganisationWithTenant(store, { name: 'Acme', plan: 'paid', apiEnabled: true, now: Date.now() })
    store.close()
    chmodSync(dir, 0o755)
    chmodSync(join(dir, 'control.sqlite'), 0o666)
    chmodSync(tenantFilePath(dir, org.id), 0o644)
    expect(admin(dir, ['org', 'list']).status).toBe(0)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'control.sqlite')).mode & 0o777).toBe(0o600)
    expect(statSync(tenantFilePath(dir, org.id)).mode & 0o777).toBe(0o600)
  })

  test('a replica\'s data directory is made private by admin replica', () => {
    const dir = place('replica')
    mkdirSync(dir, { mode: 0o755 })
    chmodSync(dir, 0o755)
    admin(dir, ['replica', 'restore', '--from', `file://${place('nothing')}`, '--litestream', '/bin/true'])
    expect(statSync(dir).mode & 0o777).toBe(0o700)
  })
})

describe('a tenant file replaced by a link while serving', () => {
  test('linked to another organisation\'s file: 503 with the error body, logged once, never the victim\'s tickets; served again once put back', async () => {
    await withServer(async (server) => {
      const acme = server.seeded()
      const victim = server.organisation()
      const db = openTenant(server.dataDir, victim.org.id)
      writeStructure(db)
      writeTickets(db, standardTickets().map((ticket) => ({ ...ticket, id: `victim-${ticket.id}` })))
      db.close()
      const path = tenantFilePath(server.dataDir, acme.org.id)
      expect((await server.get('/v1/queues', acme.token)).status).toBe(200)
      renameSync(path, `${path}.kept`)
      symlinkSync(tenantFilePath(server.dataDir, victim.org.id), path)
      for (const target of ['/v1/queues', '/v1/tickets?from=2024-01-01&to=2024-01-31', '/v1/tickets?from=2024-01-01&to=2024-01-31']) {
        const answer = await server.get(target, acme.token)
        const text = await answer.text()
        expect({ target, status: answer.status }).toEqual({ target, status: 503 })
        expect(JSON.parse(text)).toMatchObject({ error: 'data_unavailable' })
        expect(text).not.toContain('victim-')
      }
      const logged = server.logger.lines.filter((line) => line.includes('"tenant_unavailable"') && line.includes(acme.org.id))
      expect(logged).toHaveLength(1)
      expect(logged[0]).toContain('tenant file is a symbolic link')
      // A hard link is another name of the victim's file: refused alike.
      rmSync(path)
      linkSync(tenantFilePath(server.dataDir, victim.org.id), path)
      expect((await server.get('/v1/queues', acme.token)).status).toBe(503)
      rmSync(path)
      renameSync(`${path}.kept`, path)
      expect((await server.get('/v1/queues', acme.token)).status).toBe(200)
    })
  })

  test('control.sqlite replaced by a link while serving: 503, not the linked file\'s tokens', async () => {
    await withServer(async (server) => {
      const acme = server.seeded()
      expect((await server.get('/v1/queues', acme.token)).status).toBe(200)
      const control = join(server.dataDir, 'control.sqlite')
      const copy = place('control-copy.sqlite')
      writeFileSync(copy, readFileSync(control))
      rmSync(control)
      rmSync(`${control}-wal`, { force: true })
      rmSync(`${control}-shm`, { force: true })
      symlinkSync(copy, control)
      const answer = await server.get('/v1/queues', acme.token)
      expect(answer.status).toBe(503)
    })
  })
})

describe.if(isRoot)('another user who gets write access to a running server\'s directory (a chmod by mistake)', () => {
  test('nobody\'s control.sqlite swapped in, naming the victim: 503, not the victim\'s data through nobody\'s token', async () => {
    await withServer(async (server) => {
      const victim = server.seeded()
      expect((await server.get('/v1/queues', victim.token)).status).toBe(200)
      // nobody's own control.sqlite: a copy of the service's, so that the victim's organisation and token are in it.
      const control = join(server.dataDir, 'control.sqlite')
      server.app.store.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      chmodSync(server.dataDir, 0o777)
      chmodSync(control, 0o644)
      shAsNobody(`cp ${control} ${server.dataDir}/mine.tmp; mv -f ${server.dataDir}/mine.tmp ${control}`)
      expect(statSync(control).uid).toBe(NOBODY)
      const answer = await server.get('/v1/queues', victim.token)
      expect(answer.status).toBe(503)
      expect(await answer.text()).not.toContain('"locations"')
    })
  })

  test('nobody\'s tenant file, or nobody\'s link to the victim\'s, in place of an organisation\'s: 503, logged once', async () => {
    await withServer(async (server) => {
      const acme = server.seeded()
      const victim = server.seeded()
      const orgs = join(server.dataDir, 'orgs')
      const path = tenantFilePath(server.dataDir, acme.org.id)
      chmodSync(server.dataDir, 0o755)
      chmodSync(orgs, 0o777)
      chmodSync(tenantFilePath(server.dataDir, victim.org.id), 0o644)
      shAsNobody(`rm -f ${path}; ln -s ${tenantFilePath(server.dataDir, victim.org.id)} ${path}`)
      expect((await server.get('/v1/queues', acme.token)).status).toBe(503)
      shAsNobody(`rm -f ${path}; cp ${tenantFilePath(server.dataDir, victim.org.id)} ${path}`)
      expect(statSync(path).uid).toBe(NOBODY)
      const answer = await server.get('/v1/queues', acme.token)
      expect(answer.status).toBe(503)
      expect(JSON.parse(await answer.text())).toMatchObject({ error: 'data_unavailable' })
      const logged = server.logger.lines.filter((line) => line.includes('"tenant_unavailable"') && line.includes(acme.org.id))
      expect(logged.map((line) => JSON.parse(line).reason)).toEqual(['tenant file is a symbolic link', `tenant file belongs to user nobody (uid ${NOBODY}), not to user root (uid 0) running the service`])
    })
  })
})

