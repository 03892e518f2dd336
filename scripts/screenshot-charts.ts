// Makes the charts' screenshots of docs/page.md#the-charts from the sample organisation, as a
// fresh clone shows it: `bun scripts/screenshot-charts.ts` starts the server on an empty data
// directory (SAMPLE_DATA=on: the sample organisation; a token from the admin CLI), opens the page in headless Chromium in
// Europe/Amsterdam, draws the charts of the default range (the last 30 days) and saves each
// chart as docs/charts-<chart>.png, and the whole page at both sizes under test/artifacts/.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

const ROOT = join(import.meta.dir, '..')
const ZONE = 'Europe/Amsterdam'
const dataDir = mkdtempSync(join(tmpdir(), 'charts-screenshots-'))
const server = Bun.spawn([process.execPath, 'src/main.ts'], {
  cwd: ROOT,
  env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', SAMPLE_DATA: 'on' },
  stdout: 'pipe',
  stderr: 'inherit',
})

/** Resolves with the first match of `pattern` in what the stream prints; reads on to its end (a full pipe would stop the server). */
function waitFor(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = ''
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    const read = (): Promise<void> =>
      reader.read().then(({ done, value }) => {
        if (done) return reject(new Error(`the server ended before printing ${pattern}`))
        text += decoder.decode(value, { stream: true })
        const match = pattern.exec(text)
        if (match) resolve(match)
        return read()
      })
    read().catch(reject)
  })
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] })
try {
  const url = (await waitFor(server.stdout, /"event":"listening","url":"([^"]+)"/))[1]!
  const admin = Bun.spawnSync([process.execPath, 'src/cli/admin.ts', 'token', 'create', '--org', 'sample', '--name', 'screenshots', '--json'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir } })
  const token = JSON.parse(admin.stdout.toString()).token as string
  mkdirSync(join(ROOT, 'test', 'artifacts'), { recursive: true })
  for (const [name, viewport] of [['1280x720', { width: 1280, height: 720 }], ['360x740', { width: 360, height: 740 }]] as const) {
    const page = await browser.newPage({ viewport, timezoneId: ZONE })
    await page.goto(url)
    await page.getByLabel(/Paste an API token/).fill(token)
    await page.getByRole('button', { name: 'Use token' }).click()
    await page.getByText(/is in use for this tab/).waitFor()
    await page.getByRole('button', { name: 'Charts' }).click()
    await page.getByText(/^Charts drawn from/).waitFor()
    if (name === '1280x720') {
      for (const chart of ['per-day', 'wait', 'arrivals', 'outcome']) {
        await page.locator(`#chart-${chart}`).screenshot({ path: join(ROOT, 'docs', `charts-${chart}.png`) })
      }
    }
    await page.screenshot({ path: join(ROOT, 'test', 'artifacts', `charts-sample-${name}.png`), fullPage: true })
    await page.close()
  }
} finally {
  await browser.close()
  server.kill()
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
