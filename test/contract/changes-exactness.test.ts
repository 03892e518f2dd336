import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Database } from 'bun:sqlite'
import { startServer, openTenant, type TestServer } from '../support/harness.ts'
import { CANARY, writeStructure } from '../support/fixtures.ts'
import { loadCsv, loadPages, tenantRows, upsert, type LoadRun, type TicketText } from '../support/loader.ts'
import { TICKET_STATUSES } from '../../src/contract/vocabulary.ts'
import { Random } from '../../src/seed/random.ts'

/**
 * Exactness of change tracking as a property (docs/api.md#loading-incrementally): seeded random
 * data, then random batches of inserts, status changes and personal-column edits by a writer
 * connection (the administration application), interleaved with loader runs that follow the
 * documented loop. After every run the loader's copy equals the tenant's rows of the range,
 * except the tickets changed during that run, which the next run must bring; a run returns
 * nothing that did not change since the previous run's token, apart from changes made during a
 * run. Replay a failure with CHANGES_SEED=<the seed in the test's name>.
 */

const SEED = process.env.CHANGES_SEED ?? 'exactness-1'
const FROM = '2026-03-01T00:00:00.000Z'
const TO = '2026-03-11T00:00:00.000Z'
const RUNS = 12
/** Queues with their location, as the fixture's structure has them. */
const QUEUES = [['q_pay', 'loc_a'], ['q_id', 'loc_a'], ['q_zh', 'loc_b'], ['q_a2', 'loc_a2']] as const

let server: TestServer
beforeAll(async () => {
  server = await startServer({ rateLimitPerMinute: 1_000_000 })
})
afterAll(() => server.close())

/** The administration application: random writes on its own connection, each batch in a transaction. */
class Writer {
  private next = 0
  constructor(private readonly db: Database, private readonly random: Random) {}

  private instant(fromMs: number, spanMs: number): string {
    return new Date(fromMs + Math.floor(this.random.next() * spanMs)).toISOString()
  }

  /** New tickets, some outside the loader's range (a few days either side). */
  insert(count: number): void {
    const insert = this.db.prepare(
      `INSERT INTO tickets (id, number, queue_id, location_id, status, created_at, customer_name, notes, party_size, bearer_hash)
       VALUES (?, ?, ?, ?, 'WAITING', ?, ?, ?, ?, ?)`,
    )
    for (let i = 0; i < count; i++) {
      const [queue, location] = this.random.pick(QUEUES)
      const id = `tk-${String(this.next++).padStart(5, '0')}`
      insert.run(id, this.next, queue, location, this.instant(Date.parse(FROM) - 3 * 86_400_000, 16 * 86_400_000), CANARY.customerName, CANARY.notes, CANARY.partySize, CANARY.bearerHash)
    }
  }

  /** Status changes with their lifecycle timestamp, on random existing tickets. */
  changeStatuses(count: number): void {
    const ids = this.ids()
    const column: Record<string, string | null> = { WAITING: null, CALLED: 'called_at', COMPLETED: 'completed_at', CANCELED: 'cancelled_at', SKIPPED: 'skipped_at', NO_SHOW: 'no_show_at' }
    for (let i = 0; i < count && ids.length > 0; i++) {
      const status = this.random.pick(TICKET_STATUSES)
      const at = column[status]
      if (at) this.db.query(`UPDATE tickets SET status = ?, ${at} = ? WHERE id = ?`).run(status, this.instant(Date.parse(FROM), 10 * 86_400_000), this.random.pick(ids))
      else this.db.query(`UPDATE tickets SET status = ? WHERE id = ?`).run(status, this.random.pick(ids))
    }
  }

  /** Edits of personal columns only: never a change the API can show. */
  editPersonal(count: number): void {
    const ids = this.ids()
    for (let i = 0; i < count && ids.length > 0; i++) {
      this.db.query(`UPDATE tickets SET notes = ?, party_size = ? WHERE id = ?`).run(`edited ${this.random.int(0, 1e6)}`, this.random.int(1, 9), this.random.pick(ids))
    }
  }

  /** One random batch, in one or several transactions; returns the ids whose served values it changed. */
  batch(size: number): Set<string> {
    const before = this.all()
    const transactions = this.random.int(1, 3)
    for (let t = 0; t < transactions; t++) {
      this.db.transaction(() => {
        this.insert(this.random.int(0, size))
        this.changeStatuses(this.random.int(0, 2 * size))
        this.editPersonal(this.random.int(0, size))
      })()
    }
    return changedBetween(before, this.all())
  }

  all(): Map<string, TicketText> {
    return tenantRows(this.db, '0000', '9999')
  }

  private ids(): string[] {
    return (this.db.query('SELECT id FROM tickets').all() as { id: string }[]).map((row) => row.id)
  }
}

/** Ids whose served values differ between two reads of the tenant (new ones included). */
function changedBetween(before: Map<string, TicketText>, after: Map<string, TicketText>): Set<string> {
  const changed = new Set<string>()
  for (const [id, row] of after) if (JSON.stringify(before.get(id)) !== JSON.stringify(row)) changed.add(id)
  return changed
}

interface Loader {
  name: string
  /** The query's filters, also as SQL for reading the tenant's own rows. */
  filters: string
  where: string
  run(apiToken: string, query: string, changedAfter: string | null, during: () => void): Promise<LoadRun>
}

const loaders: Loader[] = [
  {
    name: 'JSON pages, no filter, 7 rows a page',
    filters: '',
    where: '1',
    run: (apiToken, query, changedAfter, during) => loadPages(server, apiToken, query, changedAfter, { limit: 7, afterPage: during }),
  },
  {
    name: 'JSON pages, two queues, 5 rows a page',
    filters: '&queueId=q_pay&queueId=q_zh',
    where: `queue_id IN ('q_pay', 'q_zh')`,
    run: (apiToken, query, changedAfter, during) => loadPages(server, apiToken, query, changedAfter, { limit: 5, afterPage: during }),
  },
  {
    name: 'CSV export, no filter',
    filters: '',
    where: '1',
    run: (apiToken, query, changedAfter, during) => loadCsv(server, apiToken, query, changedAfter, { afterHeaders: during }),
  },
  {
    name: 'CSV export, one location',
    filters: '&locationId=loc_a',
    where: `location_id = 'loc_a'`,
    run: (apiToken, query, changedAfter, during) => loadCsv(server, apiToken, query, changedAfter, { afterHeaders: during }),
  },
]

describe(`a loader following the documented loop keeps an exact copy (seed ${SEED})`, () => {
  for (const loader of loaders) {
    test(loader.name, async () => {
      const random = new Random(`${SEED}/${loader.name}`)
      const { org, token: apiToken } = server.organisation()
      const db = openTenant(server.dataDir, org.id)
      writeStructure(db)
      const writer = new Writer(db, random)
      writer.insert(600)
      writer.changeStatuses(400)

      const query = `from=${FROM}&to=${TO}${loader.filters}`
      const inScope = (ids: Set<string>) => {
        const scope = tenantRows(db, FROM, TO, loader.where)
        return new Set([...ids].filter((id) => scope.has(id)))
      }
      const copy = new Map<string, TicketText>()
      let token: string | null = null
      let changedDuringLastRun = new Set<string>()
      let delivered = 0

      for (let run = 0; run <= RUNS; run++) {
        const quiet = run === RUNS // the last run has no writes during it: the copy must then be exact
        const changedBefore = run === 0 ? new Set<string>() : writer.batch(random.int(5, 40))
        const changedDuring = new Set<string>()
        const during = () => {
          if (quiet || !random.chance(0.4)) return
          for (const id of writer.batch(random.int(1, 10))) changedDuring.add(id)
        }

        const result = await loader.run(apiToken, query, token, during)
        const received = result.rows.map((row) => row.id!)
        expect(new Set(received).size).toBe(received.length) // each row once within a run
        const keys = result.rows.map((row) => `${row.createdAt}\u0000${row.id}`)
        expect(keys).toEqual([...keys].sort())
        expect(result.token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)

        if (token !== null) {
          // Nothing missed: every change since the previous run's token comes.
          const due = inScope(new Set([...changedBefore, ...changedDuringLastRun]))
          for (const id of due) if (!received.includes(id)) throw new Error(`run ${run} missed ${id}`)
          // And nothing else, but what changed during a run (at least once, not "everything again").
          const allowed = new Set([...due, ...changedDuring])
          for (const id of received) if (!allowed.has(id)) throw new Error(`run ${run} returned ${id}, which did not change`)
          delivered += received.length
        }
        upsert(copy, result.rows)
        token = result.token
        changedDuringLastRun = changedDuring

        // The copy equals the tenant's rows of the range, but for tickets changed during this run.
        const tenant = tenantRows(db, FROM, TO, loader.where)
        for (const id of copy.keys()) if (!tenant.has(id)) throw new Error(`the copy holds ${id}, outside the query`)
        for (const [id, row] of tenant) {
          if (changedDuring.has(id)) continue
          expect({ run, id, row: copy.get(id) }).toEqual({ run, id, row })
        }
        if (quiet) expect(copy).toEqual(tenant)
      }
      expect(delivered).toBeGreaterThan(50) // the runs did carry changes
      db.close()
    }, 60_000)
  }
})
