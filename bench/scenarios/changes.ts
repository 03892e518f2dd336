import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { cancelTickets, copyBigTenant, WRITER_TICKETS, writerRun } from '../change-tracking.ts'
import { curlExport, inTurn, repeat, sequential } from '../measure.ts'
import { ROOT } from '../processes.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'
import { tenantFilePath } from '../../src/tenant/paths.ts'

/** Tickets changed after the token the reader's figures start from. */
const CHANGED = 1_000

/**
 * What change tracking costs (docs/api.md#loading-incrementally). The writer: the
 * administration application's bulk insert and status updates on a fresh file without the
 * change log's triggers (schema version 2) and with them (version 3), which goes first
 * alternating. The reader: on a copy of the 1M-ticket tenant with 1,000 tickets changed after a
 * token, a changedAfter page (the first and the last of two) against an unfiltered page of the
 * same range, one sequential client in rotating rounds; and the changedAfter export of those
 * 1,000 rows against the same export without changedAfter (curl), alternating.
 */
export const changes: Scenario = {
  name: 'changes',
  title: "change tracking: the writer with and without the change log's triggers; changedAfter pages and export",
  needs: ['big-tenant', 'curl'],
  async run({ big, report, settings, log, startService }) {
    const rounds = settings.runs + 2
    log(`Change tracking, the writer: ${WRITER_TICKETS} inserts, then ${WRITER_TICKETS} status updates, ${rounds} rounds`)
    const writer = await repeat(rounds, (i) => inTurn(i, async () => writerRun(2), async () => writerRun(3)))
    const perTicket = (side: 0 | 1, key: 'insertSeconds' | 'updateSeconds') => summarise(writer.map((runs) => (runs[side][key] / WRITER_TICKETS) * 1e6))
    const mib = (side: 0 | 1) => summarise(writer.map((runs) => runs[side].bytes / 2 ** 20))
    const noTriggers = 'no triggers (version 2)'
    report.record({ figure: `changes: bulk insert of ${WRITER_TICKETS} tickets with the change log's triggers (version 3)`, value: perTicket(1, 'insertSeconds'), unit: 'µs/ticket', baseline: { name: noTriggers, value: perTicket(0, 'insertSeconds') } })
    report.record({ figure: `changes: ${WRITER_TICKETS} status updates by id with the triggers`, value: perTicket(1, 'updateSeconds'), unit: 'µs/update', baseline: { name: noTriggers, value: perTicket(0, 'updateSeconds') } })
    report.record({ figure: 'changes: file size after both, version 3', value: mib(1), unit: 'MiB', baseline: { name: 'version 2', value: mib(0) } })

    log(`Change tracking, the reader: a copy of the 1M-ticket tenant, ${CHANGED} tickets changed after a token`)
    // A copy of its own: the changes below must not alter the shared benchmark data.
    const dataDir = join(ROOT, 'bench', '.data', 'changes')
    try {
      log(`  copied; migrating the copy to the newest schema took ${copyBigTenant(big, dataDir).toFixed(2)} s`)
      const server = await startService({ DATA_DIR: dataDir }, 'bench-changes')
      try {
        const token = big.bigTokens[0]!
        const get = (path: string) => fetch(server.base + path, { headers: { Authorization: `Bearer ${token}` } })
        const range = `from=${big.range1m.from}&to=${big.range1m.to}`
        const first = await get(`/v1/tickets?${range}&limit=1`)
        const changesToken = first.headers.get('x-changes-token')
        await first.arrayBuffer()
        if (!changesToken) throw new Error('no X-Changes-Token: is the copy at schema version 3?')
        cancelTickets(tenantFilePath(dataDir, big.bigOrgId), CHANGED)

        const changed = `${range}&changedAfter=${encodeURIComponent(changesToken)}`
        const firstPage = (await (await get(`/v1/tickets?${changed}&limit=500`)).json()) as { items: unknown[]; nextCursor: string | null }
        if (firstPage.items.length !== 500 || !firstPage.nextCursor) throw new Error(`expected ${CHANGED} changed tickets in two pages`)
        const paths = {
          unfiltered: `/v1/tickets?${range}&limit=500`,
          changedFirst: `/v1/tickets?${changed}&limit=500`,
          changedLast: `/v1/tickets?${changed}&limit=500&cursor=${encodeURIComponent(firstPage.nextCursor)}`,
        }
        const names = Object.keys(paths) as (keyof typeof paths)[]
        for (const name of names) {
          const response = await get(paths[name])
          await response.arrayBuffer()
          if (response.status !== 200) throw new Error(`${name} answered ${response.status}`)
        }
        // Pages: rounds of sequential requests, each round's p50 kept, the order rotating between rounds.
        const requests = settings.quick ? 50 : 200
        log(`  pages of 500 rows: ${settings.pairs} rounds of ${requests} sequential requests each, in rotating order`)
        const pageRun = (name: keyof typeof paths, count: number) => sequential(server.base, [paths[name]], token, 60, count)
        for (const name of names) await pageRun(name, 20) // warm-up
        const p50s = { unfiltered: [] as number[], changedFirst: [] as number[], changedLast: [] as number[] }
        for (let round = 0; round < settings.pairs; round++) {
          for (let i = 0; i < names.length; i++) {
            const name = names[(round + i) % names.length]!
            p50s[name].push((await pageRun(name, requests)).p50)
          }
        }
        const unfiltered = { name: 'an unfiltered page of the range (the first of 1M)', value: summarise(p50s.unfiltered) }
        const atMostTwice = { of: 'ratio', is: '<=', bound: 2 } as const
        report.record({ figure: 'changes: changedAfter page of 500, first of 2, p50', value: summarise(p50s.changedFirst), unit: 'ms', baseline: unfiltered, target: atMostTwice })
        report.record({ figure: 'changes: changedAfter page of 500, last of 2, p50', value: summarise(p50s.changedLast), unit: 'ms', baseline: unfiltered, target: atMostTwice })

        const runs = settings.runs + 2
        log(`  exports: ${runs} runs each, alternating`)
        const exportOf = (query: string) => () => curlExport(`${server.base}/v1/exports/tickets.csv?${query}`, token)
        const exports = await repeat(runs, (i) => inTurn(i, exportOf(changed), exportOf(range)))
        const [changedSize, wholeSize] = [exports[0]![0].bytes, exports[0]![1].bytes]
        report.record({
          figure: `changes: changedAfter export (${CHANGED} rows, ${(changedSize / 1024).toFixed(0)} KiB)`,
          value: summarise(exports.map(([changedRun]) => changedRun.total * 1000)),
          unit: 'ms',
          baseline: { name: `without changedAfter (${big.bigTickets} rows, ${(wholeSize / 2 ** 20).toFixed(0)} MiB)`, value: summarise(exports.map(([, wholeRun]) => wholeRun.total * 1000)) },
        })
      } finally {
        await server.stop()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  },
}
