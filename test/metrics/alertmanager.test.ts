import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../support/free-port.ts'

/**
 * deploy/alertmanager/alertmanager.yml: `amtool check-config` accepts it, and a real
 * alertmanager (Debian's `prometheus-alertmanager`) started with it suppresses the generic
 * 5xx-ratio page while a specific page of the same job fires (docs/operations.md#alerts).
 * Without the package these tests skip with a warning; in CI (CI=true) they fail, since CI
 * installs it (scripts/install-alertmanager.sh).
 */
const CONFIG = 'deploy/alertmanager/alertmanager.yml'
const amtool = Bun.which('amtool')
const alertmanager = Bun.which('prometheus-alertmanager') ?? Bun.which('alertmanager')

function alertmanagerAvailable(): boolean {
  if (amtool && alertmanager) return true
  if (process.env.CI === 'true') throw new Error('amtool/alertmanager are not installed: CI installs them with scripts/install-alertmanager.sh')
  console.warn('warning: amtool/alertmanager are not installed here; the Alertmanager tests are skipped (apt-get install prometheus-alertmanager, or scripts/install-alertmanager.sh)')
  return false
}

const ALERT_NAMES = [
  'QueueApiDown',
  'QueueApiHighServerErrorRatio',
  'QueueApiLimitsFailingClosed',
  'QueueApiTenantDataUnavailable',
  'QueueApiExportsSlow',
  'QueueApiExportsStalled',
]

describe('alert names', () => {
  const rules = readFileSync('deploy/prometheus/alerts.yml', 'utf8')
  const defined = [...rules.matchAll(/^\s*- alert: (\w+)$/gm)].map((match) => match[1])

  test('every alert operators route and silence by keeps its name', () => {
    for (const name of ALERT_NAMES) expect(defined).toContain(name)
  })

  test('every alert name the inhibit rules use is an alert of deploy/prometheus/alerts.yml', () => {
    const named = [...readFileSync(CONFIG, 'utf8').matchAll(/alertname=~?"([^"]+)"/g)].flatMap((match) => match[1]!.split('|'))
    expect(named.length).toBeGreaterThan(0)
    for (const name of named) expect(defined).toContain(name)
  })
})

describe.skipIf(!alertmanagerAvailable())('Alertmanager', () => {
  let child: Subprocess | undefined
  let base = ''
  const dir = mkdtempSync(join(tmpdir(), 'qa-api-alertmanager-'))

  beforeAll(async () => {
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    child = Bun.spawn(
      [alertmanager!, `--config.file=${CONFIG}`, `--storage.path=${dir}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address='],
      { stdout: 'ignore', stderr: 'pipe' },
    )
    const deadline = Date.now() + 10_000
    for (;;) {
      const ready = await fetch(`${base}/-/ready`).then((response) => response.ok, () => false)
      if (ready) break
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`alertmanager did not start: ${await new Response(child.stderr as ReadableStream).text()}`)
      await Bun.sleep(100)
    }
  })
  afterAll(async () => {
    child?.kill('SIGKILL')
    await child?.exited
    rmSync(dir, { recursive: true, force: true })
  })

  test('amtool check-config accepts the configuration', () => {
    const result = Bun.spawnSync([amtool!, 'check-config', CONFIG])
    expect(result.stdout.toString()).toContain('SUCCESS')
    expect(result.exitCode).toBe(0)
  })

  test('a specific page suppresses the 5xx-ratio page of its job, and only of its job', async () => {
    const alert = (alertname: string, job: string, instance?: string) => ({
      labels: { alertname, job, severity: 'page', ...(instance ? { instance } : {}) },
      annotations: { summary: 'test' },
      startsAt: new Date().toISOString(),
    })
    const posted = await fetch(`${base}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify([
        alert('QueueApiLimitsFailingClosed', 'limits-down', 'api-1:9464'),
        alert('QueueApiHighServerErrorRatio', 'limits-down'),
        alert('QueueApiTenantDataUnavailable', 'tenant-down'),
        alert('QueueApiHighServerErrorRatio', 'tenant-down'),
        alert('QueueApiHighServerErrorRatio', 'only-errors'),
      ]),
    })
    expect(posted.status).toBe(200)

    const states = async () => {
      const alerts = (await (await fetch(`${base}/api/v2/alerts`)).json()) as { labels: Record<string, string>; status: { state: string; inhibitedBy: string[] } }[]
      return Object.fromEntries(alerts.map((a) => [`${a.labels.alertname} ${a.labels.job}`, a.status.state]))
    }
    expect(await states()).toEqual({
      'QueueApiLimitsFailingClosed limits-down': 'active',
      'QueueApiHighServerErrorRatio limits-down': 'suppressed',
      'QueueApiTenantDataUnavailable tenant-down': 'active',
      'QueueApiHighServerErrorRatio tenant-down': 'suppressed',
      'QueueApiHighServerErrorRatio only-errors': 'active',
    })
  })
})
