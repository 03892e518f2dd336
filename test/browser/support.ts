import { afterAll, beforeAll, expect } from 'bun:test'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import type { Config } from '../../src/config/config.ts'
import { startServer, type TestServer } from '../support/harness.ts'

/**
 * Real headless Chromium (Debian's package) for the browser tests. Without it the tests are
 * skipped with a notice, except in CI, where .ci/run installs it and its absence is a failure.
 */
export const CHROMIUM = '/usr/bin/chromium'
export const chromiumAvailable = existsSync(CHROMIUM)
if (!chromiumAvailable && process.env.CI) throw new Error(`${CHROMIUM} is missing; .ci/run installs the chromium package`)
if (!chromiumAvailable) console.warn(`browser tests skipped: ${CHROMIUM} not installed (apt-get install chromium)`)

/** Screenshots go here (ignored by git), to be looked at. */
export const ARTIFACTS = join(import.meta.dir, '..', 'artifacts')

/** The two sizes the page is tried at: a laptop and a small phone. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 720 },
  phone: { width: 360, height: 740 },
} as const
export type ViewportName = keyof typeof VIEWPORTS
/** The laptop's screen at 200 % zoom: half the CSS pixels, each drawn with two device pixels. */
export const ZOOMED = { viewport: { width: 640, height: 360 }, deviceScaleFactor: 2 } as const

/**
 * Every piece of text of the charts that is cut by its chart's edge or drawn over another: the
 * SVG text (tick labels, axis titles, the ramp legend's labels) against its SVG's box and the
 * chart's visible box, and the HTML legend's swatches against each other and the chart. Empty.
 */
export function chartTextProblems(page: Page): Promise<string[]> {
  return page.locator('#charts-list .plot').evaluateAll((plots) => {
    const problems: string[] = []
    const inside = (inner: DOMRect, outer: DOMRect) => inner.left >= outer.left - 0.5 && inner.right <= outer.right + 0.5 && inner.top >= outer.top - 0.5 && inner.bottom <= outer.bottom + 0.5
    const overlap = (a: DOMRect, b: DOMRect) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5
    const describe = (element: Element) => `"${element.textContent}" in ${element.closest('.chart')?.id}`
    for (const plot of plots) {
      const visible = plot.getBoundingClientRect()
      for (const svg of plot.querySelectorAll('svg')) {
        const box = svg.getBoundingClientRect()
        const texts = [...svg.querySelectorAll('text')].filter((text) => text.textContent!.trim() !== '')
        const rects = texts.map((text) => text.getBoundingClientRect())
        texts.forEach((text, i) => {
          if (!inside(rects[i]!, box) || !inside(rects[i]!, visible)) problems.push(`${describe(text)} is cut by the chart's edge`)
          for (let j = i + 1; j < texts.length; j++) if (overlap(rects[i]!, rects[j]!)) problems.push(`${describe(text)} overlaps ${describe(texts[j]!)}`)
        })
      }
      const swatches = [...plot.querySelectorAll('[class$="-swatch"]')]
      const rects = swatches.map((swatch) => swatch.getBoundingClientRect())
      swatches.forEach((swatch, i) => {
        if (!inside(rects[i]!, visible)) problems.push(`legend ${describe(swatch)} is cut by the chart's edge`)
        for (let j = i + 1; j < swatches.length; j++) if (overlap(rects[i]!, rects[j]!)) problems.push(`legend ${describe(swatch)} overlaps ${describe(swatches[j]!)}`)
      })
    }
    return problems
  })
}

export async function launchChromium(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true })
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/**
 * Chromium and the named test servers (each with its config overrides) for one describe block:
 * started before its tests, closed after them. Their fields are set once the tests run.
 */
export function browserSetup<Names extends string>(servers: Record<Names, Partial<Config>>): { browser: Browser } & Record<Names, TestServer> {
  const setup = {} as { browser: Browser } & Record<Names, TestServer>
  const names = Object.keys(servers) as Names[]
  beforeAll(async () => {
    for (const name of names) setup[name] = (await startServer(servers[name])) as (typeof setup)[Names]
    setup.browser = await launchChromium()
  })
  afterAll(async () => {
    await setup.browser?.close()
    for (const name of names) await setup[name]?.close()
  })
  return setup
}

/** A paid organisation with the standard locations and `count` tickets from 1 March 2026, one every `everySeconds`; its token. */
export function organisationWithManyTickets(server: TestServer, count: number, everySeconds: number): string {
  return server.seeded({ bulk: { count, start: '2026-03-01', everySeconds } }).token
}

export interface OpenOptions {
  path?: string
  viewport?: { width: number; height: number }
  /**
   * 'none' removes showSaveFilePicker (the Blob path, as in Firefox and Safari); 'stub' installs
   * the recording stand-in below (the Chrome/Edge path; headless Chromium cannot answer a dialog).
   */
  picker?: 'none' | 'stub'
  /** Installs Playwright's fake clock in the page before it loads, so countdowns move when told. */
  fakeClock?: boolean
  /**
   * The browser's time zone (the page's default zone). UTC unless told, so that a test's days
   * do not depend on the zone of the machine that runs it.
   */
  timezoneId?: string
  /** Device pixels per CSS pixel: 2 with half the viewport is the laptop's screen at 200 % zoom. */
  deviceScaleFactor?: number
  /** The browser's colour scheme (the page honours prefers-color-scheme). */
  colorScheme?: 'light' | 'dark'
  /** Date.now() in the page held at this instant from before it loads (timers still run). */
  fixedNow?: string
}

/** A page that records every request and refuses any that would leave `base`. */
export async function openPage(browser: Browser, base: string, options: OpenOptions = {}): Promise<{ page: Page; requests: string[] }> {
  const context = await browser.newContext({
    acceptDownloads: true,
    viewport: options.viewport ?? { width: 1100, height: 900 },
    timezoneId: options.timezoneId ?? 'UTC',
    deviceScaleFactor: options.deviceScaleFactor,
    colorScheme: options.colorScheme ?? 'light',
  })
  const requests: string[] = []
  await context.route('**/*', (route) => {
    const url = route.request().url()
    requests.push(url)
    return url.startsWith(base) ? route.continue() : route.abort()
  })
  if ((options.picker ?? 'none') === 'none') {
    await context.addInitScript(() => delete (window as unknown as Record<string, unknown>).showSaveFilePicker)
  } else {
    await installPickerStub(context)
  }
  if (options.fakeClock) await context.clock.install()
  if (options.fixedNow) await context.clock.setFixedTime(new Date(options.fixedNow))
  const page = await context.newPage()
  await page.goto(base + (options.path ?? '/'))
  return { page, requests }
}

export async function useToken(page: Page, token: string) {
  await page.getByLabel(/Paste an API token/).fill(token)
  await page.getByRole('button', { name: 'Use token' }).click()
}

/** Exact names: once the charts are drawn, a chart's description ("…from a ticket's creation…") also holds "from". */
export async function setRange(page: Page, from: string, to: string) {
  await page.getByLabel('From', { exact: true }).fill(from)
  await page.getByLabel('To (included)', { exact: true }).fill(to)
}

export function screenshot(page: Page, name: string) {
  return page.screenshot({ path: join(ARTIFACTS, `${name}.png`) })
}

/** The element's box lies wholly inside the viewport (what the analyst sees without scrolling). */
export async function expectInViewport(page: Page, locator: Locator) {
  const box = await locator.boundingBox()
  const viewport = page.viewportSize()!
  expect(box).not.toBeNull()
  expect(box!.y).toBeGreaterThanOrEqual(0)
  expect(box!.x).toBeGreaterThanOrEqual(0)
  expect(box!.y + box!.height).toBeLessThanOrEqual(viewport.height)
  expect(box!.x + box!.width).toBeLessThanOrEqual(viewport.width)
}

/** The element is, or is inside, a live region: a screen reader reads out what appears in it. */
export async function expectAnnounced(locator: Locator) {
  const live = await locator.evaluate((element) => {
    const region = element.closest('[role="alert"], [role="status"], [aria-live]')
    return region?.getAttribute('aria-live') ?? region?.getAttribute('role') ?? ''
  })
  expect(['alert', 'status', 'assertive', 'polite']).toContain(live)
}

/** What the picker stand-in recorded: the dialogs opened, and the files as the disk would hold them. */
export interface PickerRecord {
  dialogs: { suggestedName: string }[]
  files: Record<string, string>
  removed: string[]
}

export function pickerRecord(page: Page): Promise<PickerRecord> {
  return page.evaluate(() => {
    const record = (window as unknown as { __picker: PickerRecord & Record<string, unknown> }).__picker
    return { dialogs: record.dialogs, files: record.files, removed: record.removed }
  })
}

/** Configures the stand-in before an action: the name the analyst types, and a failure to play. */
export function setPicker(
  page: Page,
  settings: { chooseName?: string; failWrite?: boolean; noActivation?: boolean; cancel?: boolean; holdWrites?: boolean; noRemove?: boolean },
) {
  return page.evaluate((s) => Object.assign((window as unknown as { __picker: object }).__picker, s), settings)
}

/** Lets writes held by `holdWrites` go on. */
export function releaseWrites(page: Page) {
  return page.evaluate(() => (window as unknown as { __picker: { release: () => void } }).__picker.release())
}

/**
 * A stand-in for window.showSaveFilePicker that behaves as Chromium's does where it matters:
 * the dialog creates the chosen file empty, a writable collects into a swap copy that only
 * close() makes the file's content, abort() discards it, and handle.remove() deletes the file.
 * It records the suggested name of every dialog and the resulting files.
 */
async function installPickerStub(context: BrowserContext) {
  await context.addInitScript(() => {
    const picker = {
      dialogs: [] as { suggestedName: string }[],
      files: {} as Record<string, string>,
      removed: [] as string[],
      chooseName: null as string | null,
      failWrite: false,
      noActivation: false,
      cancel: false,
      holdWrites: false,
      noRemove: false,
      held: [] as (() => void)[],
      release() {
        picker.holdWrites = false
        for (const go of picker.held.splice(0)) go()
      },
    }
    ;(window as unknown as Record<string, unknown>).__picker = picker
    ;(window as unknown as Record<string, unknown>).showSaveFilePicker = async (options: { suggestedName: string }) => {
      if (picker.noActivation) {
        // As Chromium answers once the click's transient activation has expired; the next call works.
        picker.noActivation = false
        throw new DOMException("Failed to execute 'showSaveFilePicker' on 'Window': Must be handling a user gesture to show a file picker.", 'SecurityError')
      }
      picker.dialogs.push({ suggestedName: options.suggestedName })
      if (picker.cancel) throw new DOMException('The user aborted a request.', 'AbortError')
      const name = picker.chooseName ?? options.suggestedName
      picker.files[name] = ''
      const handle = {
        kind: 'file',
        name,
        async createWritable() {
          let swap = ''
          // ignoreBOM keeps a byte-order mark in the text, as the file on disk keeps it.
          const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
          return {
            async write(chunk: Uint8Array) {
              if (picker.holdWrites) await new Promise<void>((go) => picker.held.push(go))
              if (picker.failWrite) throw new DOMException('The disk is full.', 'QuotaExceededError')
              swap += decoder.decode(chunk, { stream: true })
            },
            async close() {
              picker.files[name] = swap + decoder.decode()
            },
            async abort() {
              swap = ''
            },
          }
        },
        async remove() {
          delete picker.files[name]
          picker.removed.push(name)
        },
      }
      // FileSystemHandle.remove() is Chromium's alone (since 110): a browser may lack it.
      if (picker.noRemove) delete (handle as Partial<typeof handle>).remove
      return handle
    }
  })
}

/** The axe-core source from node_modules, injected into pages (nothing is loaded from another host). */
export const AXE_SOURCE = readFileSync(join(import.meta.dir, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8')

interface Violation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[] }[]
}

/** Runs axe-core (from node_modules, injected: nothing loaded from another host) on the page as it is. */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string | null; help: string; targets: string[] }[]> {
  await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Violation[] }> } }).axe
    return (await axe.run(document, { resultTypes: ['violations'] })).violations
  })
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')) }))
}
