import { describe, expect, test } from 'bun:test'
import { WorkerMetrics } from '../../src/metrics/across-workers.ts'
import { createServiceMetrics } from '../../src/metrics/prometheus.ts'
import { parseScrape, valueOf } from './support.ts'

/**
 * The parent's side of WORKERS=N with the workers' registries in this process: how answers are
 * combined, and what a scrape uses for a worker that does not answer in time or has exited.
 * (test/metrics/workers.test.ts runs the same over real processes and their IPC channels.)
 */
/** A worker's registry behind the channel, known by `pid` as the supervisor knows its processes. */
function worker(channel: WorkerMetrics, pid: number) {
  const metrics = createServiceMetrics()
  const state = { answering: true }
  channel.opened(pid, (message) => {
    const { id } = message as { id: number }
    if (!state.answering) return
    // A copy, as the IPC channel makes one: prom-client's JSON shares its live value objects.
    void metrics.registry.getMetricsAsJSON().then((json) => channel.received(pid, structuredClone({ type: 'metrics', id, metrics: json })))
  })
  return { recorder: metrics.recorder, state }
}

const scrape = async (channel: WorkerMetrics) => parseScrape(await (await channel.collect()).metrics()).samples

describe('WorkerMetrics', () => {
  test('counters and histograms summed, in-flight gauges summed, the limits up only if up everywhere', async () => {
    const channel = new WorkerMetrics()
    const a = worker(channel, 0)
    const b = worker(channel, 1)
    a.recorder.requestAnswered('queues', 200, 0.002)
    b.recorder.requestAnswered('queues', 200, 0.004)
    b.recorder.requestAnswered('export', 200, 12)
    a.recorder.exportStarted()
    b.recorder.exportStarted()
    b.recorder.limitsBackendUp(false)
    const samples = await scrape(channel)
    expect(valueOf(samples, 'queue_api_requests_total', { operation: 'queues', status: '200' })).toBe(2)
    expect(valueOf(samples, 'queue_api_request_duration_seconds_bucket', { operation: 'queues', le: '0.005' })).toBe(2)
    expect(valueOf(samples, 'queue_api_request_duration_seconds_bucket', { operation: 'export', le: '10' })).toBe(0)
    expect(valueOf(samples, 'queue_api_request_duration_seconds_bucket', { operation: 'export', le: '30' })).toBe(1)
    expect(valueOf(samples, 'queue_api_exports_in_flight')).toBe(2)
    expect(valueOf(samples, 'queue_api_limits_backend_up')).toBe(0)
    expect(valueOf(samples, 'queue_api_build_info')).toBe(1)
  })

  test('a worker that does not answer in time is counted with its last answer, never dropped', async () => {
    const channel = new WorkerMetrics({ answerTimeoutMs: 50 })
    const a = worker(channel, 0)
    const b = worker(channel, 1)
    a.recorder.requestAnswered('tickets', 200, 0.001)
    b.recorder.requestAnswered('tickets', 200, 0.001)
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'tickets' })).toBe(2)
    b.state.answering = false
    b.recorder.requestAnswered('tickets', 200, 0.001) // not seen until it answers again
    a.recorder.requestAnswered('tickets', 200, 0.001)
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'tickets' })).toBe(3)
    b.state.answering = true
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'tickets' })).toBe(4)
  })

  test('a worker that exits leaves its counters and histograms, not its gauges; its replacement adds to them', async () => {
    const channel = new WorkerMetrics()
    const a = worker(channel, 0)
    worker(channel, 1)
    a.recorder.requestAnswered('other', 404, 0.001)
    a.recorder.exportStarted()
    await scrape(channel)
    channel.closed(0)
    let samples = await scrape(channel)
    expect(valueOf(samples, 'queue_api_requests_total', { operation: 'other', status: '404' })).toBe(1)
    expect(valueOf(samples, 'queue_api_request_duration_seconds_count', { operation: 'other' })).toBe(1)
    expect(valueOf(samples, 'queue_api_exports_in_flight')).toBe(0)
    const replacement = worker(channel, 0)
    replacement.recorder.requestAnswered('other', 404, 0.001)
    samples = await scrape(channel)
    expect(valueOf(samples, 'queue_api_requests_total', { operation: 'other', status: '404' })).toBe(2)
  })

  test('a worker that exits while a scrape waits for another is counted once, and the total never goes down', async () => {
    const channel = new WorkerMetrics({ answerTimeoutMs: 200 })
    const a = worker(channel, 0)
    const b = worker(channel, 1)
    a.recorder.requestAnswered('queues', 200, 0.001)
    b.recorder.requestAnswered('queues', 200, 0.001)
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'queues' })).toBe(2)
    b.state.answering = false // this scrape waits for b until its timeout...
    const waiting = scrape(channel)
    await Bun.sleep(20) // ...a has answered by now...
    channel.closed(0) // ...and exits before the scrape is done: its counts move to what exited workers left
    const totals = [valueOf(await waiting, 'queue_api_requests_total', { operation: 'queues' })]
    b.state.answering = true
    totals.push(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'queues' }))
    expect(totals).toEqual([2, 2])
  })

  test('a worker’s final metrics are kept and acknowledged; an answer that arrives after them changes nothing', async () => {
    const channel = new WorkerMetrics()
    const metrics = createServiceMetrics()
    const told: unknown[] = []
    channel.opened(7, (message) => told.push(message))
    metrics.recorder.requestAnswered('queues', 200, 0.001)
    const final = structuredClone(await metrics.registry.getMetricsAsJSON())
    channel.received(7, { type: 'metrics', id: 0, metrics: final, final: true })
    expect(told).toEqual([{ type: 'metrics-kept' }])
    metrics.recorder.requestAnswered('queues', 200, 0.001) // not counted: nothing after the final answer is
    channel.received(7, { type: 'metrics', id: 1, metrics: structuredClone(await metrics.registry.getMetricsAsJSON()) })
    channel.closed(7)
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'queues' })).toBe(1)
  })

  test('refresh asks every worker between scrapes: a worker that then exits leaves what it had counted by then', async () => {
    const channel = new WorkerMetrics()
    const a = worker(channel, 0)
    a.recorder.requestAnswered('tickets', 200, 0.001)
    await channel.refresh()
    a.state.answering = false
    channel.closed(0)
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'tickets' })).toBe(1)
  })

  test('workers are known by pid: two processes of one index (a rolling restart) are both counted', async () => {
    const channel = new WorkerMetrics()
    const old = worker(channel, 101)
    const replacement = worker(channel, 102)
    old.recorder.requestAnswered('tickets', 200, 0.001)
    replacement.recorder.requestAnswered('tickets', 200, 0.001)
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'tickets' })).toBe(2)
    channel.closed(101)
    expect(valueOf(await scrape(channel), 'queue_api_requests_total', { operation: 'tickets' })).toBe(2)
  })
})

