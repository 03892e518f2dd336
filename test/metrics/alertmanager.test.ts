import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../support/free-port.ts'

/**
 * deploy/alertmanager/alertmanager.yml: `amtool check-config` accepts it, and a real
 * alertmanager (Debian's `prometheus-alertmanager`) started with it, given alerts by `amtool
 * alert add`, suppresses a 5xx-ratio page only while a page of the same job and the same
 * cause fires: a ticket hides no page, and another cause of 5xx still pages (docs/operations.md#alerts).
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

  test('each inhibit rule keeps to one cause: equal names job and cause, and every alert it names carries a cause', () => {
    type Rule = { alert?: string; labels?: Record<string, string> }
    const groups = (Bun.YAML.parse(rules) as { groups: { rules: Rule[] }[] }).groups
    const alerts = groups.flatMap((group) => group.rules).filter((rule) => rule.alert)
    const inhibitions = (Bun.YAML.parse(readFileSync(CONFIG, 'utf8')) as { inhibit_rules: { source_matchers: string[]; target_matchers: string[]; equal: string[] }[] }).inhibit_rules
    expect(inhibitions.length).toBeGreaterThan(0)
    for (const rule of inhibitions) {
      expect(rule.equal).toEqual(['job', 'cause'])
      // A ticket never silences a page: the source must page itself.
      expect(rule.source_matchers).toContain('severity="page"')
      const named = [...rule.source_matchers, ...rule.target_matchers].join(' ').matchAll(/alertname=~?"([^"]+)"/g)
      for (const name of [...named].flatMap((match) => match[1]!.split('|'))) {
        const defined = alerts.filter((alert) => alert.alert === name)
        expect({ name, count: defined.length }).not.toEqual({ name, count: 0 })
        for (const alert of defined) expect({ name, cause: alert.labels?.cause }).toEqual({ name, cause: expect.stringMatching(/^[a-z_]+$/) })
      }
    }
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

  test('the limits store failing closed suppresses the 5xx-ratio page of its job and cause only; a ticket (a tenant\'s broken file) suppresses no page', async () => {
    /** `amtool alert add`: an alert as Prometheus would send it, by its labels. */
    const add = (labels: Record<string, string>) => {
      const args = Object.entries({ severity: 'page', ...labels }).map(([name, value]) => `${name}=${value}`)
      const result = Bun.spawnSync([amtool!, `--alertmanager.url=${base}`, 'alert', 'add', ...args, '--annotation=summary=test'], { stdout: 'pipe', stderr: 'pipe' })
      expect({ labels, status: result.exitCode, stderr: result.stderr.toString() }).toEqual({ labels, status: 0, stderr: '' })
    }
    const ratio = 'QueueApiHighServerErrorRatio'
    // A tenant's broken file (a ticket) in one job, the tenant_data ratio paging (the outage grew),
    // and a second cause: the ticket hides neither page.
    add({ alertname: 'QueueApiTenantDataUnavailable', job: 'tenant-down', cause: 'tenant_data', severity: 'ticket' })
    add({ alertname: ratio, job: 'tenant-down', cause: 'tenant_data' })
    add({ alertname: ratio, job: 'tenant-down', cause: 'other' })
    // The limits failing closed on one instance of another job, likewise.
    add({ alertname: 'QueueApiLimitsFailingClosed', job: 'limits-down', instance: 'api-1:9464', cause: 'limits_store' })
    add({ alertname: ratio, job: 'limits-down', cause: 'limits_store' })
    add({ alertname: ratio, job: 'limits-down', cause: 'other' })
    // A cause's echo without its alert (not firing yet, or another job's): it pages.
    add({ alertname: ratio, job: 'only-errors', cause: 'limits_store' })
    add({ alertname: ratio, job: 'only-errors', cause: 'tenant_data' })
    // A ratio alert without a cause (rules older than this file's): never inhibited.
    add({ alertname: ratio, job: 'tenant-down' })

    const states = async () => {
      const alerts = (await (await fetch(`${base}/api/v2/alerts`)).json()) as { labels: Record<string, string>; status: { state: string } }[]
      return Object.fromEntries(alerts.map((a) => [`${a.labels.alertname} ${a.labels.job} ${a.labels.cause ?? '(none)'}`, a.status.state]))
    }
    expect(await states()).toEqual({
      'QueueApiTenantDataUnavailable tenant-down tenant_data': 'active',
      'QueueApiHighServerErrorRatio tenant-down tenant_data': 'active',
      'QueueApiHighServerErrorRatio tenant-down other': 'active',
      'QueueApiLimitsFailingClosed limits-down limits_store': 'active',
      'QueueApiHighServerErrorRatio limits-down limits_store': 'suppressed',
      'QueueApiHighServerErrorRatio limits-down other': 'active',
      'QueueApiHighServerErrorRatio only-errors tenant_data': 'active',
      'QueueApiHighServerErrorRatio only-errors limits_store': 'active',
      'QueueApiHighServerErrorRatio tenant-down (none)': 'active',
    })
  })
})
