import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { createApp, type App, type AppDeps } from '../../src/app.ts'
import { configWith, type Config } from '../../src/config/config.ts'
import { ManualClock } from '../../src/clock.ts'
import { memoryLogger } from '../../src/logger.ts'
import { createOrganisationWithTenant } from '../../src/control/provisioning.ts'
import { ControlStore, type Organisation } from '../../src/control/store.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'
import { hashToken } from '../../src/auth/token.ts'
import { CANARY, standardTickets, writeBulkTickets, writeStructure, writeTickets, type BulkTickets, type FixtureTicket } from './fixtures.ts'

/** A fresh temporary data directory, removed by `cleanup`. */
export function tempDataDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'qa-api-test-'))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * A data directory for a server started as a process: one paid organisation whose 50,000 tickets
 * make an export long enough to be held mid-way, and a token of it.
 */
export function dataDirWithLongExport(name: string): { dir: string; cleanup: () => void; token: string } {
  const made = tempDataDir()
  const store = new ControlStore(made.dir)
  try {
    const org = createOrganisationWithTenant(store, { name, plan: 'paid', apiEnabled: true, now: Date.now() })
    const db = openTenant(made.dir, org.id)
    writeStructure(db)
    writeBulkTickets(db, { count: 50_000, everySeconds: 120 })
    db.close()
    return { ...made, token: store.createToken({ organisationId: org.id, name, createdAt: new Date().toISOString() }).token }
  } finally {
    store.close()
  }
}

export interface TestServer {
  app: App
  base: string
  clock: ManualClock
  logger: ReturnType<typeof memoryLogger>
  dataDir: string
  config: Config
  get(path: string, token?: string | null, headers?: Record<string, string>): Promise<Response>
  /** Creates an organisation (tenant file included) and a token for it. */
  organisation(options?: { plan?: 'demo' | 'paid'; apiEnabled?: boolean; name?: string }): { org: Organisation; token: string }
  /** An organisation with the standard fixture's locations and queues, and `tickets` (the standard ones by default). */
  /**
   * An organisation with the standard fixture's locations and queues, then `bulk` generated
   * tickets (writeBulkTickets) if given, then `tickets` (the standard ones when neither is given).
   */
  seeded(options?: { plan?: 'demo' | 'paid'; tickets?: FixtureTicket[]; bulk?: BulkTickets }): { org: Organisation; token: string }
  token(organisationId: string, name?: string): { id: string; token: string }
  close(): Promise<void>
}

/**
 * A server with one seeded organisation (the standard fixture) for the tests of the enclosing
 * describe, or of the file at its top level: started in beforeAll, closed in afterAll. Its fields
 * are set once beforeAll has run, so read them inside tests and hooks.
 */
export function seededServer(overrides: Partial<Config> = {}): { server: TestServer; token: string; org: Organisation } {
  const held = {} as { server: TestServer; token: string; org: Organisation }
  beforeAll(async () => {
    held.server = await startServer(overrides)
    Object.assign(held, held.server.seeded())
  })
  afterAll(() => held.server?.close())
  return held
}

/** The real app on a real port (listen(0)) over real SQLite files in a temp directory. */
export async function startServer(
  overrides: Partial<Config> = {},
  options: {
    dataDir?: string
    clock?: ManualClock
    limits?: AppDeps['limits']
    observers?: AppDeps['observers']
    metrics?: AppDeps['metrics']
    limitsProbeEveryMs?: number
    idleTimeoutSeconds?: number
  } = {},
): Promise<TestServer> {
  const temp = options.dataDir ? null : tempDataDir()
  const dataDir = options.dataDir ?? temp!.dir
  const clock = options.clock ?? new ManualClock()
  const logger = memoryLogger('debug')
  const config = configWith({ dataDir, host: '127.0.0.1', port: 0, ...overrides })
  const app = createApp({ config, logger, clock, limits: options.limits, observers: options.observers, metrics: options.metrics, limitsProbeEveryMs: options.limitsProbeEveryMs })
  const server = app.listen(0, { idleTimeoutSeconds: options.idleTimeoutSeconds })
  const base = `http://127.0.0.1:${server.port}`
  let counter = 0
  const issued: string[] = []
  const token = (organisationId: string, name = 'test token') => {
    const { record, token } = app.store.createToken({ organisationId, name, createdAt: new Date(clock.now()).toISOString() })
    issued.push(token)
    return { id: record.id, token }
  }
const organisation: TestServer['organisation'] = (opts = {}) => {
    const org = createOrganisationWithTenant(app.store, {
      name: opts.name ?? `Test Organisation ${++counter}`,
      slug: `test-org-${counter}-${Math.random().toString(36).slice(2, 8)}`,
      plan: opts.plan ?? 'paid',
      apiEnabled: opts.apiEnabled ?? true,
      now: clock.now(),
    })
    return { org, token: token(org.id).token }
  }
  return {
    app,
    base,
    clock,
    logger,
    dataDir,
    config,
    get(path, bearer, headers = {}) {
      const all: Record<string, string> = { ...headers }
      if (bearer) all.Authorization = `Bearer ${bearer}`
      return fetch(base + path, { headers: all })
    },
    organisation,
    token,
    seeded(opts = {}) {
      const created = organisation({ plan: opts.plan })
      const db = openTenant(dataDir, created.org.id)
      writeStructure(db)
      if (opts.bulk) writeBulkTickets(db, opts.bulk)
      writeTickets(db, opts.tickets ?? (opts.bulk ? [] : standardTickets()))
      db.close()
      return created
    },
    async close() {
      await app.close(0)
      temp?.cleanup()
      // Every test server's log is audited: whatever the test did, no token, token hash,
      // personal value or file path may have been logged.
      assertNoSecretsLogged(logger.lines, [...issued, ...issued.map(hashToken), ...Object.values(CANARY).map(String), dataDir])
    },
  }
}

export function assertNoSecretsLogged(lines: string[], secrets: string[]): void {
  for (const line of lines) {
    for (const secret of secrets) {
      if (line.includes(secret)) throw new Error(`a secret was logged: ${line.slice(0, 200)}`)
    }
  }
}

/** Opens an organisation's tenant file for writing, as the administration application would. */
export function openTenant(store: ControlStore | string, organisationId: string): Database {
  const dataDir = typeof store === 'string' ? store : store.dataDir
  const db = new Database(tenantFilePath(dataDir, organisationId))
  db.exec('PRAGMA busy_timeout = 5000')
  return db
}
