import { connect } from 'node:net'
import { readFileSync } from 'node:fs'
import { repeat } from '../measure.ts'
import { cpuOf, rssOf } from '../processes.ts'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

/** A reader at about 1 MB/s for 5 s, then gone: what it costs the server, and that the statement is released. */
export const slowReader: Scenario = {
  name: 'slow-reader',
  title: 'a 1M-row export read at 1 MB/s for 5 s, then abandoned',
  needs: ['big-tenant', 'server'],
  async run({ big, server, report, settings, log }) {
    log('Slow reader')
    const results = await repeat(settings.runs, async () => {
      const url = new URL(server.base)
      const logBefore = readFileSync(server.logPath, 'utf8').length
      const rssBefore = rssOf(server.pid)
      const cpuBefore = cpuOf(server.pid)
      let peak = rssBefore
      const socket = connect({ host: url.hostname, port: Number(url.port) })
      await new Promise((resolve) => socket.once('connect', resolve))
      socket.write(`GET /v1/exports/tickets.csv?from=${big.range1m.from}&to=${big.range1m.to} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${big.bigTokens[1]}\r\n\r\n`)
      let received = 0
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length
        socket.pause()
      })
      const started = Date.now()
      while (Date.now() - started < 5000) {
        // 100 KB every 100 ms: resume until the budget of this slice is read.
        if (received < ((Date.now() - started) / 1000) * 1_000_000) socket.resume()
        peak = Math.max(peak, rssOf(server.pid))
        await Bun.sleep(10)
      }
      socket.destroy()
      let released = false
      const deadline = Date.now() + 5000
      while (!released && Date.now() < deadline) {
        released = /"event":"export_ended"[^\n]*"outcome":"cancelled"/.test(readFileSync(server.logPath, 'utf8').slice(logBefore))
        await Bun.sleep(20)
      }
      return { growth: (peak - rssBefore) / 2 ** 20, cpu: cpuOf(server.pid) - cpuBefore, received, released }
    })
    report.record({ figure: 'slow reader (1 MB/s for 5 s): RSS growth', value: summarise(results.map((r) => r.growth)), unit: 'MB', target: { of: 'value', is: '<=', bound: 16 } })
    report.record({ figure: 'slow reader: server CPU used', value: summarise(results.map((r) => r.cpu)), unit: 's' })
    report.record({ figure: 'slow reader: MB read by the client', value: summarise(results.map((r) => r.received / 1e6)), unit: 'MB' })
    const released = results.filter((r) => r.released).length
    report.record({ figure: `slow reader: statement released after disconnect (${released}/${results.length} runs)`, value: summarise([released / results.length]), unit: '' })
  },
}
