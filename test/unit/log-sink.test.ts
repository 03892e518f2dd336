import { describe, expect, test } from 'bun:test'
import { createLogger, LOG_BATCH_BYTES, LOG_BATCH_MS, stdoutSink } from '../../src/logger.ts'

/** A sink whose writes are recorded and whose timer runs only when the test says. */
function recordedSink() {
  const writes: string[] = []
  const timers: { flush: () => void; ms: number }[] = []
  const sink = stdoutSink((text) => writes.push(text), (flush, ms) => timers.push({ flush, ms }))
  return { sink, writes, timers }
}

describe('stdoutSink: the log written in batches', () => {
  test('the lines of a batch go out in one write when its timer runs, not before', () => {
    const { sink, writes, timers } = recordedSink()
    sink.write('a\n', 'info')
    sink.write('b\n', 'info')
    expect(writes).toEqual([])
    expect(timers.map((timer) => timer.ms)).toEqual([LOG_BATCH_MS])
    timers[0]!.flush()
    expect(writes).toEqual(['a\nb\n'])
    sink.write('c\n', 'info')
    expect(timers).toHaveLength(2)
    timers[1]!.flush()
    expect(writes).toEqual(['a\nb\n', 'c\n'])
  })

  test('an error goes out at once, after the lines that wait', () => {
    const { sink, writes } = recordedSink()
    sink.write('a\n', 'info')
    sink.write('boom\n', 'error')
    expect(writes).toEqual(['a\nboom\n'])
  })

  test('a batch that reaches its size goes out at once', () => {
    const { sink, writes } = recordedSink()
    const line = `${'x'.repeat(1023)}\n`
    for (let i = 0; i < LOG_BATCH_BYTES / 1024 - 1; i++) sink.write(line, 'info')
    expect(writes).toEqual([])
    sink.write(line, 'info')
    expect(writes).toHaveLength(1)
    expect(writes[0]!.length).toBe(LOG_BATCH_BYTES)
  })

  test('flush (a clean stop) writes everything that waits, and nothing twice', () => {
    const { sink, writes, timers } = recordedSink()
    sink.write('a\n', 'info')
    sink.flush()
    timers[0]!.flush()
    sink.flush()
    expect(writes).toEqual(['a\n'])
  })

  test('lines through the logger arrive whole and in order', () => {
    const { sink, writes } = recordedSink()
    const logger = createLogger('info', sink.write)
    for (let i = 0; i < 3; i++) logger.info('request', { i })
    logger.debug('hidden')
    sink.flush()
    const lines = writes.join('').trimEnd().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => [line.event, line.i])).toEqual([['request', 0], ['request', 1], ['request', 2]])
    expect(lines.every((line) => typeof line.time === 'string' && !Number.isNaN(Date.parse(line.time)))).toBe(true)
  })
})
