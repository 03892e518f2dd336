import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writerRun, WRITER_TICKETS } from '../change-tracking.ts'
import { inTurn, repeat } from '../measure.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'
import { openWritableDatabase } from '../../src/db/files.ts'
import { migrate } from '../../src/db/migrator.ts'
import { createLogger } from '../../src/logger.ts'
import { TENANT_MIGRATIONS } from '../../src/tenant/migrations.ts'
import { tenantDirectory, tenantFilePath } from '../../src/tenant/paths.ts'
import { TenantPool } from '../../src/tenant/pool.ts'
import { checkServedRows, checkServedSelection } from '../../src/tenant/served-rows.ts'
import { TicketQueries } from '../../src/tickets/repository.ts'
import { parseTicketQuery } from '../../src/tickets/query.ts'
import { csvLine } from '../../src/export/csv-format.ts'
import type { Ticket } from '../../src/contract/schemas.ts'
import { writeBulkTickets, writeStructure } from '../../test/support/fixtures.ts'

/** Tickets of the older file the reader's figures read. */
const OLDER_FILE_TICKETS = 300_000
const RANGE = 'from=2026-01-01T00:00:00Z&to=2026-03-31T00:00:00Z'

/**
 * What the value rules of schema version 4 cost (docs/operations.md#what-a-row-must-hold). The
 * writer: the administration application's bulk insert and status updates with the value rules'
 * triggers (version 4) against without them (version 3), which goes first alternating. The
 * reader, which checks rows only on a file that does not vouch for them (older than version 4):
 * on such a file of 300,000 tickets, the export's check of its whole selection in SQL against
 * the export's own read and CSV formatting of the same rows (in-process, no HTTP); and the
 * check of a 1,000-row page against reading it. A version-4 file's reads check nothing.
 */
export const rowCheck: Scenario = {
  name: 'row-check',
  title: "the value rules: the writer with and without version 4's triggers; an older file's checks on the export and a page",
  needs: [],
  async run({ report, settings, log }) {
    const rounds = settings.runs + 2
    log(`Value rules, the writer: ${WRITER_TICKETS} inserts, then ${WRITER_TICKETS} status updates, ${rounds} rounds`)
    const writer = await repeat(rounds, (i) => inTurn(i, async () => writerRun(3), async () => writerRun(4)))
    const perTicket = (side: 0 | 1, key: 'insertSeconds' | 'updateSeconds') => summarise(writer.map((runs) => (runs[side][key] / WRITER_TICKETS) * 1e6))
    const without = 'version 3 (no value-rule triggers)'
    report.record({ figure: `value rules: bulk insert of ${WRITER_TICKETS} tickets with version 4's triggers`, value: perTicket(1, 'insertSeconds'), unit: 'µs/ticket', baseline: { name: without, value: perTicket(0, 'insertSeconds') } })
    report.record({ figure: `value rules: ${WRITER_TICKETS} status updates by id with version 4's triggers`, value: perTicket(1, 'updateSeconds'), unit: 'µs/update', baseline: { name: without, value: perTicket(0, 'updateSeconds') } })

    log(`Value rules, the reader: a version-3 file of ${OLDER_FILE_TICKETS} tickets`)
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-row-check-'))
    const pool = new TenantPool({ dataDir, maxOpen: 4, logger: createLogger('silent', () => undefined) })
    try {
      mkdirSync(tenantDirectory(dataDir), { recursive: true })
      const writerDb = openWritableDatabase(tenantFilePath(dataDir, 'org_older'), 5000)
      migrate(writerDb, TENANT_MIGRATIONS.slice(0, 3))
      writeStructure(writerDb)
      writerDb.transaction(() => writeBulkTickets(writerDb, { count: OLDER_FILE_TICKETS, start: '2026-01-01', everySeconds: 20 }))()
      writerDb.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      writerDb.close()

      const queries = new TicketQueries()
      const select = queries.exportQuery(parseTicketQuery(new URLSearchParams(RANGE), 'export'))
      const pageQuery = parseTicketQuery(new URLSearchParams(`${RANGE}&limit=500`), 'page')
      // The export's own work per row besides HTTP: step the statement, format the line.
      const exportRead = () => {
        const snapshot = pool.openSnapshot('org_older', { own: true })
        const started = performance.now()
        try {
          snapshot.iterate(select.sql, select.values)
          for (let next = snapshot.next(); !next.done; next = snapshot.next()) csvLine(next.value as Ticket, false)
          return performance.now() - started
        } finally {
          snapshot.close()
        }
      }
      const preCheck = () => {
        const snapshot = pool.openSnapshot('org_older', { own: true })
        const started = performance.now()
        try {
          snapshot.read((lease) => checkServedSelection(lease, select))
          return performance.now() - started
        } finally {
          snapshot.close()
        }
      }
      exportRead()
      const exportPairs = await repeat(rounds, (i) => inTurn(i, async () => exportRead(), async () => preCheck()))
      report.record({
        figure: `value rules: an older file's export of ${OLDER_FILE_TICKETS} rows, its selection checked in SQL before the first byte`,
        value: summarise(exportPairs.map(([, check]) => check)),
        unit: 'ms',
        baseline: { name: "the export's own read and CSV formatting of the rows", value: summarise(exportPairs.map(([read]) => read)) },
      })

      const pageTimes = (check: boolean) => {
        const snapshot = pool.openSnapshot('org_older')
        try {
          return snapshot.read((lease) => {
            const started = performance.now()
            for (let i = 0; i < 20; i++) {
              const { rows } = queries.readPage(lease, pageQuery, null)
              if (check) checkServedRows(lease, 'tickets', rows)
            }
            return (performance.now() - started) / 20
          })
        } finally {
          snapshot.close()
        }
      }
      pageTimes(true)
      const pagePairs = await repeat(rounds, (i) => inTurn(i, async () => pageTimes(false), async () => pageTimes(true)))
      report.record({
        figure: "value rules: an older file's page of 500 rows, read and checked",
        value: summarise(pagePairs.map(([, checked]) => checked)),
        unit: 'ms',
        baseline: { name: 'the page read alone', value: summarise(pagePairs.map(([read]) => read)) },
      })
    } finally {
      pool.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  },
}
