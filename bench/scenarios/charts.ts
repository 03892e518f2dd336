import { chromium, type CDPSession, type Page } from 'playwright-core'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

const CHROMIUM = '/usr/bin/chromium'
const DAY_MS = 86_400_000

/**
 * The JS heap of the tab, the page and its workers together, sampled every 50 ms through the
 * DevTools protocol (a dedicated worker has a heap of its own, where the charts' rows pass).
 */
async function heapSampler(page: Page): Promise<{ reset(): void; peak(): number; stop(): Promise<void> }> {
  const cdp: CDPSession = await page.context().newCDPSession(page)
  const workers = new Set<string>()
  const pending = new Map<number, (used: number) => void>()
  let nextId = 1
  cdp.on('Target.attachedToTarget', (event) => {
    if (event.targetInfo.type === 'worker') workers.add(event.sessionId)
  })
  cdp.on('Target.detachedFromTarget', (event) => workers.delete(event.sessionId))
  cdp.on('Target.receivedMessageFromTarget', (event) => {
    const message = JSON.parse(event.message) as { id?: number; result?: { usedSize: number } }
    if (message.id !== undefined) pending.get(message.id)?.(message.result?.usedSize ?? 0)
  })
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false })
  const workerHeap = (sessionId: string) =>
    new Promise<number>((resolve) => {
      const id = nextId++
      const timer = setTimeout(() => resolve(0), 1000) // a worker that ended meanwhile
      pending.set(id, (used) => {
        clearTimeout(timer)
        pending.delete(id)
        resolve(used)
      })
      cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method: 'Runtime.getHeapUsage' }) }).catch(() => resolve(0))
    })
  let peak = 0
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const main = (await cdp.send('Runtime.getHeapUsage')).usedSize
      const inWorkers = await Promise.all([...workers].map(workerHeap))
      peak = Math.max(peak, main + inWorkers.reduce((a, b) => a + b, 0))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  return {
    reset: () => (peak = 0),
    peak: () => peak,
    stop: async () => {
      stopped = true
      await loop
      await cdp.detach()
    },
  }
}

/** Seconds from the click on Charts to the four charts drawn (the charts' list filled), timed in the page. */
async function chartsOnce(page: Page): Promise<number> {
  await page.evaluate(() => {
    const list = document.getElementById('charts-list')!
    const state = window as unknown as { chartsTimer: { started: number; drawn: number | null } }
    state.chartsTimer = { started: 0, drawn: null }
    document.getElementById('charts')!.addEventListener('click', () => (state.chartsTimer.started = performance.now()), { once: true, capture: true })
    new MutationObserver((_, observer) => {
      if (!list.querySelector('#chart-outcome')) return
      state.chartsTimer.drawn = performance.now()
      observer.disconnect()
    }).observe(list, { childList: true })
    list.replaceChildren()
  })
  await page.getByRole('button', { name: 'Charts' }).click()
  await page.waitForFunction(() => (window as unknown as { chartsTimer: { drawn: number | null } }).chartsTimer.drawn !== null, undefined, { timeout: 600_000, polling: 100 })
  return page.evaluate(() => {
    const timer = (window as unknown as { chartsTimer: { started: number; drawn: number } }).chartsTimer
    return (timer.drawn - timer.started) / 1000
  })
}

/** Seconds for the bare CSV export of the same range, fetched and read to its end by the same tab. */
function downloadOnce(page: Page, path: string, token: string): Promise<{ seconds: number; bytes: number }> {
  return page.evaluate(
    async ({ path, token }) => {
      const started = performance.now()
      const response = await fetch(path, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/csv' } })
      const reader = response.body!.getReader()
      let bytes = 0
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        bytes += value.byteLength
      }
      return { seconds: (performance.now() - started) / 1000, bytes }
    },
    { path, token },
  )
}

/**
 * The charts of the big tenant in headless Chromium: seconds from the click to the last chart
 * drawn and the tab's peak JS heap, for the first 8 days (about 100k tickets) and the whole 90
 * days (about 1.2M), against the bare export of the same range read by the same tab.
 */
export const charts: Scenario = {
  name: 'charts',
  title: 'the charts in Chromium: click to the last chart and peak JS heap, ~100k and ~1M tickets, against the bare export download',
  needs: ['big-tenant', 'server', 'chromium'],
  async run({ big, server, report, settings, log }) {
    log('charts in Chromium')
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] })
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, timezoneId: 'UTC' })
      const page = await context.newPage()
      const token = big.bigTokens[2]!
      await page.goto(server.base)
      await page.getByLabel(/Paste an API token/).fill(token)
      await page.getByRole('button', { name: 'Use token' }).click()
      await page.getByText(/is in use for this tab/).waitFor()
      const sampler = await heapSampler(page)
      const firstDay = Date.parse(big.range1m.from)
      const heaps: Record<string, number[]> = {}
      for (const [label, days] of [['~100k', 8], ['~1M', 90]] as const) {
        const from = new Date(firstDay).toISOString().slice(0, 10)
        const to = new Date(firstDay + (days - 1) * DAY_MS).toISOString().slice(0, 10)
        await page.getByLabel('From').fill(from)
        await page.getByLabel('To (included)').fill(to)
        const path = `/v1/exports/tickets.csv?from=${from}&to=${new Date(firstDay + days * DAY_MS).toISOString().slice(0, 10)}`
        await downloadOnce(page, path, token) // warm-up: the file's pages in the OS cache
        const drawn: number[] = []
        const downloads: number[] = []
        heaps[label] = []
        for (let i = 0; i < settings.runs; i++) {
          sampler.reset()
          drawn.push(await chartsOnce(page))
          heaps[label]!.push(sampler.peak() / 1e6)
          downloads.push((await downloadOnce(page, path, token)).seconds)
        }
        const tickets = Number((await page.locator('#charts-summary').textContent())!.replace(/,/g, '').match(/^(\d+)/)![1])
        report.recordPairs(`charts of ${days} days (${tickets} tickets): click to last chart`, drawn, downloads, 'bare export of the same range, read by the same tab', (s) => s, 's', days === 8 ? { of: 'ratio', is: '<=', bound: 1.5 } : undefined)
        report.record({ figure: `charts of ${days} days (${tickets} tickets): peak JS heap of the tab (page + worker)`, value: summarise(heaps[label]!), unit: 'MB' })
      }
      report.record({
        figure: 'charts: peak JS heap at ~1M tickets against ~100k',
        value: summarise(heaps['~1M']!),
        unit: 'MB',
        baseline: { name: 'peak JS heap at ~100k', value: summarise(heaps['~100k']!) },
        target: { of: 'ratio', is: '<=', bound: 1.5 },
      })
      await sampler.stop()
    } finally {
      await browser.close()
    }
  },
}
