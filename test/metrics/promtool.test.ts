import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { prometheusAvailable, runPromtool, startMeteredServer, type MeteredServer } from './support.ts'

/**
 * promtool (Debian's `prometheus` package) checks what ships: the alert rules and their unit
 * tests in deploy/prometheus/, and a real scrape of the metrics listener.
 */
const available = prometheusAvailable()

describe.skipIf(!available)('promtool', () => {
  let server: MeteredServer
  beforeAll(async () => {
    server = await startMeteredServer()
  })
  afterAll(() => server.close())

  test('the alert rules are valid', async () => {
    const { status, output } = await runPromtool(['check', 'rules', 'deploy/prometheus/alerts.yml'])
    expect(output).toContain('SUCCESS')
    expect(status).toBe(0)
  })

  test('the alert rules pass their unit tests (deploy/prometheus/alerts.test.yml)', async () => {
    const { status, output } = await runPromtool(['test', 'rules', 'deploy/prometheus/alerts.test.yml'])
    expect(output).toContain('SUCCESS')
    expect(status).toBe(0)
  })

  test('a real scrape passes `promtool check metrics`, with a HELP and a TYPE for every metric', async () => {
    const { token } = server.seeded()
    await server.get('/v1/queues', token)
    await server.get('/v1/queues')
    await server.get(`/v1/exports/tickets.csv?from=2026-03-01&to=2026-03-05`, token)
    const text = await server.scrapeText()
    const { status, output } = await runPromtool(['check', 'metrics'], text)
    expect(output).toBe('')
    expect(status).toBe(0)
  })
})
