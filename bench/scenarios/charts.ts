import { chromium, type CDPSession, type Page } from 'playwright-core'
import { summarise } from '../stats.ts'
import type { Scenario } from '../scenario.ts'

const CHROMIUM = '/usr/bin/chromium'
const DAY_MS = 86_400_000

interface HeapUsage {
  usedSize: number
  /** ArrayBuffer memory (typed arrays): outside the JS heap proper, reported beside it. */
  backingStorageSize?: number
}

/**
 * The memory of the tab, the page and its workers together, sampled every 50 ms through the
 * DevTools protocol (a dedicated worker has a heap of its own, where the charts' rows pass): the
 * peak JS heap, and the peak of the JS heap with ArrayBuffers (the waits' typed arrays).
 */
export async function heapSampler(page: Page): Promise<{ reset(): void; peak(): { heap: number; withBuffers: number }; retained(): Promise<number>; stop(): Promise<void> }> {
  const cdp: CDPSession = await page.context().newCDPSession(page)
  const workers = new Set<string>()
  const pending = new Map<number, (result: HeapUsage) => void>()
  let nextId = 1
  cdp.on('Target.attachedToTarget', (event) => {
    if (event.targetInfo.type === 'worker') workers.add(event.sessionId)
  })
  cdp.on('Target.detachedFromTarget', (event) => workers.delete(event.sessionId))
  cdp.on('Target.receivedMessageFromTarget', (event) => {
    const message = JSON.parse(event.message) as { id?: number; result?: HeapUsage }
    if (message.id !== undefined) pending.get(message.id)?.(message.result ?? { usedSize: 0 })
  })
  await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false })
  const workerSend = (sessionId: string, method: string) =>
    new Promise<HeapUsage>((resolve) => {
      const id = nextId++
      const timer = setTimeout(() => resolve({ usedSize: 0 }), method === 'Runtime.getHeapUsage' ? 1000 : 10_000) // a worker that ended meanwhile
      pending.set(id, (usage) => {
        clearTimeout(timer)
        pending.delete(id)
        resolve(usage)
      })
      cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method }) }).catch(() => resolve({ usedSize: 0 }))
    })
  const workerHeap = (sessionId: string) => workerSend(sessionId, 'Runtime.getHeapUsage')
  let peak = { heap: 0, withBuffers: 0 }
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const all = [(await cdp.send('Runtime.getHeapUsage')) as HeapUsage, ...(await Promise.all([...workers].map(workerHeap)))]
      const heap = all.reduce((sum, usage) => sum + usage.usedSize, 0)
      const buffers = all.reduce((sum, usage) => sum + (usage.backingStorageSize ?? 0), 0)
      peak = { heap: Math.max(peak.heap, heap), withBuffers: Math.max(peak.withBuffers, heap + buffers) }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  return {
    reset: () => (peak = { heap: 0, withBuffers: 0 }),
    peak: () => peak,
    /**
     * A diagnostic, never a target: the JS heap (page + worker) still in use after a full
     * collection forced in each, i.e. what is really kept, as opposed to garbage not yet collected.
     */
    retained: async () => {
      await cdp.send('HeapProfiler.collectGarbage')
      await Promise.all([...workers].map((sessionId) => workerSend(sessionId, 'HeapProfiler.collectGarbage')))
      const all = [(await cdp.send('Runtime.getHeapUsage')) as HeapUsage, ...(await Promise.all([...workers].map(workerHeap)))]
      return all.reduce((sum, usage) => sum + usage.usedSize, 0)
    },
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

/**
 * Seconds from the click on Download CSV to the page's "Saved …" line, with "Add names and local
 * times" ticked or not, saved through the Save dialog's path to a file that discards what it is
 * given (installed by discardingSaveDialog): the page's own streaming, nothing held.
 */
async function pageDownloadOnce(page: Page, withNames: boolean): Promise<number> {
  await page.locator('#with-names').setChecked(withNames)
  await page.evaluate(() => {
    const line = document.getElementById('progress')!
    const state = window as unknown as { downloadTimer: { started: number; saved: number | null } }
    state.downloadTimer = { started: 0, saved: null }
    document.getElementById('download')!.addEventListener('click', () => (state.downloadTimer.started = performance.now()), { once: true, capture: true })
    new MutationObserver((_, observer) => {
      if (!line.textContent!.startsWith('Saved ')) return
      state.downloadTimer.saved = performance.now()
      observer.disconnect()
    }).observe(line, { childList: true, characterData: true, subtree: true })
  })
  await page.getByRole('button', { name: 'Download CSV' }).click()
  await page.waitForFunction(() => (window as unknown as { downloadTimer: { saved: number | null } }).downloadTimer.saved !== null, undefined, { timeout: 600_000, polling: 100 })
  return page.evaluate(() => {
    const timer = (window as unknown as { downloadTimer: { started: number; saved: number } }).downloadTimer
    return (timer.saved - timer.started) / 1000
  })
}

/** A Save dialog that answers at once with a file that discards every write (headless Chromium has no dialog). */
export function discardingSaveDialog(): void {
  ;(window as unknown as Record<string, unknown>).showSaveFilePicker = async (options: { suggestedName: string }) => ({
    name: options.suggestedName,
    createWritable: async () => ({ write: async () => undefined, close: async () => undefined, abort: async () => undefined }),
    remove: async () => undefined,
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
  title: 'the charts in Chromium: click to the last chart and peak JS heap, ~100k and ~1M tickets, against the bare export download; the download with names and local times against the plain one',
  needs: ['big-tenant', 'server', 'chromium'],
  async run({ big, server, report, settings, log }) {
    log('charts in Chromium')
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] })
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, timezoneId: 'UTC' })
      await context.addInitScript(discardingSaveDialog)
      const page = await context.newPage()
      const token = big.bigTokens[2]!
      await page.goto(server.base)
      await page.getByLabel(/Paste an API token/).fill(token)
      await page.getByRole('button', { name: 'Use token' }).click()
      await page.getByText(/is in use for this tab/).waitFor()
      const sampler = await heapSampler(page)
      const firstDay = Date.parse(big.range1m.from)
      const sizes = [['~100k', 8], ['~1M', 90]] as const
      const rangeOf = (days: number) => {
        const from = new Date(firstDay).toISOString().slice(0, 10)
        const to = new Date(firstDay + (days - 1) * DAY_MS).toISOString().slice(0, 10)
        return { from, to, path: `/v1/exports/tickets.csv?from=${from}&to=${new Date(firstDay + days * DAY_MS).toISOString().slice(0, 10)}` }
      }
      const heaps: Record<string, number[]> = {}
      const withBuffers: Record<string, number[]> = {}
      for (const [label, days] of sizes) {
        const { from, to, path } = rangeOf(days)
        await page.locator('#from').fill(from)
        await page.locator('#to').fill(to)
        await downloadOnce(page, path, token) // warm-up: the file's pages in the OS cache
        const drawn: number[] = []
        const downloads: number[] = []
        heaps[label] = []
        withBuffers[label] = []
        for (let i = 0; i < settings.runs; i++) {
          sampler.reset()
          drawn.push(await chartsOnce(page))
          heaps[label]!.push(sampler.peak().heap / 1e6)
          withBuffers[label]!.push(sampler.peak().withBuffers / 1e6)
          downloads.push((await downloadOnce(page, path, token)).seconds)
        }
        const tickets = Number((await page.locator('#charts-summary').textContent())!.replace(/,/g, '').match(/^(\d+)/)![1])
        report.recordPairs(`charts of ${days} days (${tickets} tickets): click to last chart`, drawn, downloads, 'bare export of the same range, read by the same tab', (s) => s, 's', days === 8 ? { of: 'ratio', is: '<=', bound: 1.5 } : undefined)
        report.record({ figure: `charts of ${days} days (${tickets} tickets): peak JS heap of the tab (page + worker)`, value: summarise(heaps[label]!), unit: 'MB' })
        report.record({ figure: `charts of ${days} days (${tickets} tickets): peak JS heap with ArrayBuffers (stream chunks not yet collected, and the waits kept for exact quantiles)`, value: summarise(withBuffers[label]!), unit: 'MB' })
        const plain: number[] = []
        const named: number[] = []
        for (let i = 0; i < settings.runs; i++) {
          plain.push(await pageDownloadOnce(page, false))
          named.push(await pageDownloadOnce(page, true))
        }
        report.recordPairs(`download of ${days} days (${tickets} tickets) with names and local times: click to saved`, named, plain, 'the plain download of the same range', (s) => s, 's', days === 90 ? { of: 'ratio', is: '<=', bound: 1.3 } : undefined)
      }
      report.record({
        figure: 'charts: peak JS heap at ~1M tickets against ~100k',
        value: summarise(heaps['~1M']!),
        unit: 'MB',
        baseline: { name: 'peak JS heap at ~100k', value: summarise(heaps['~100k']!) },
        target: { of: 'ratio', is: '<=', bound: 1.5 },
      })
      report.record({
        figure: 'charts: peak JS heap with ArrayBuffers at ~1M tickets against ~100k',
        value: summarise(withBuffers['~1M']!),
        unit: 'MB',
        baseline: { name: 'the same at ~100k', value: summarise(withBuffers['~100k']!) },
      })
      // The diagnostic after every peak is measured, in one extra run per size, so that no forced
      // collection changes the state any measured run starts from.
      for (const [, days] of sizes) {
        const { from, to } = rangeOf(days)
        await page.locator('#from').fill(from)
        await page.locator('#to').fill(to)
        await chartsOnce(page)
        const tickets = Number((await page.locator('#charts-summary').textContent())!.replace(/,/g, '').match(/^(\d+)/)![1])
        report.record({ figure: `charts of ${days} days (${tickets} tickets): JS heap of the tab retained after a forced collection at the end (diagnostic)`, value: summarise([(await sampler.retained()) / 1e6]), unit: 'MB' })
      }
      await sampler.stop()
    } finally {
      await browser.close()
    }
  },
}
