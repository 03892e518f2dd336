import { describe, expect, test } from 'bun:test'
import { checkTarget, describeTarget, type Target } from '../../bench/targets.ts'
import { Report, type Row } from '../../bench/report.ts'
import { summarise } from '../../bench/stats.ts'

/** The benchmark's targets, checked by code; no benchmark runs here. */

const atMost = (bound: number, of: Target['of']): Target => ({ of, is: '<=', bound })

describe('checkTarget', () => {
  test('compares the value or the ratio with the bound, boundary included or not as the comparison says', () => {
    expect(checkTarget(atMost(10, 'value'), { value: 10, ratio: undefined })).toBe('met')
    expect(checkTarget(atMost(10, 'value'), { value: 10.01, ratio: 0.5 })).toBe('missed')
    expect(checkTarget({ of: 'value', is: '<', bound: 2.5 }, { value: 2.5, ratio: undefined })).toBe('missed')
    expect(checkTarget({ of: 'value', is: '<', bound: 2.5 }, { value: 2.49, ratio: undefined })).toBe('met')
    expect(checkTarget(atMost(1.3, 'ratio'), { value: 99, ratio: 1.3 })).toBe('met')
    expect(checkTarget(atMost(1.3, 'ratio'), { value: 0, ratio: 1.61 })).toBe('missed')
    expect(checkTarget({ of: 'ratio', is: '>=', bound: 0.8 }, { value: 0, ratio: 0.8 })).toBe('met')
    expect(checkTarget({ of: 'ratio', is: '>=', bound: 0.8 }, { value: 1e9, ratio: 0.79 })).toBe('missed')
    expect(checkTarget({ of: 'ratio', is: '>', bound: 0.8 }, { value: 0, ratio: 0.8 })).toBe('missed')
  })

  test('a ratio target without a ratio is not measured, never met', () => {
    expect(checkTarget(atMost(2, 'ratio'), { value: 1, ratio: undefined })).toBe('not measured')
    expect(checkTarget(atMost(2, 'ratio'), { value: 1, ratio: Number.POSITIVE_INFINITY })).toBe('not measured')
  })

  test('describes the target as the table always printed it', () => {
    expect(describeTarget(atMost(1.3, 'ratio'), 's')).toBe('≤ 1.3×')
    expect(describeTarget(atMost(10, 'value'), 'ms')).toBe('≤ 10 ms')
    expect(describeTarget({ of: 'value', is: '<', bound: 2.5 }, 's')).toBe('< 2.5 s')
    expect(describeTarget({ of: 'ratio', is: '>=', bound: 0.5 }, 'req/s')).toBe('≥ 0.5×')
  })
})

describe('Report', () => {
  const run = (figures: number[]) => summarise(figures)
  function reportOf(rows: Row[]) {
    const logged: string[] = []
    const report = new Report((line) => logged.push(line))
    for (const row of rows) report.record(row)
    return { report, logged }
  }

  test('the table shows each target with met or missed, checked against the ratio of the same run', () => {
    const { report, logged } = reportOf([
      { figure: 'export', value: run([2.1, 2.13, 2.3]), unit: 's', baseline: { name: 'sqlite3', value: run([1.1, 1.18, 1.3]) }, target: atMost(1.3, 'ratio') },
      { figure: 'first byte', value: run([3, 3.6, 5]), unit: 'ms', target: atMost(10, 'value') },
      { figure: 'no target', value: run([1]), unit: 'ms' },
    ])
    expect(report.table()).toEqual([
      '| figure | result | baseline (same run) | ratio | target |',
      '|---|---|---|---|---|',
      '| export | 2.13 s (2.10–2.30) | sqlite3: 1.18 s (1.10–1.30) | 1.81× | ≤ 1.3×: missed |',
      '| first byte | 3.60 ms (3.00–5.00) | — | — | ≤ 10 ms: met |',
      '| no target | 1.00 ms (1.00–1.00) | — | — | — |',
    ])
    expect(logged[0]).toBe('  export: 2.13 s (2.10–2.30) ratio 1.81× target ≤ 1.3×: missed')
    expect(report.targetSummary()).toBe('Targets: 1 met, 1 missed (missed: export).')
  })

  test('a paired figure is checked against the median of its pairs’ ratios', () => {
    const { report } = reportOf([])
    // Pair ratios 0.8, 1.0, 1.25 (median 1.0); the medians alone would say 95 / 100 = 0.95.
    report.recordPairs('pages req/s', [{ rps: 80 }, { rps: 100 }, { rps: 95 }], [{ rps: 100 }, { rps: 100 }, { rps: 76 }], 'framework-free', (r) => r.rps, 'req/s', { of: 'ratio', is: '>=', bound: 0.97 })
    expect(report.table()[2]).toBe('| pages req/s | 95.0 req/s (80.0–100) | framework-free: 100 req/s (76.0–100) | 1.00× (0.80–1.25, 3 pairs) | ≥ 0.97×: met |')
    expect(report.targetSummary()).toBe('Targets: 1 met, 0 missed.')
  })

  test('a ratio under 0.1 is shown as a fraction, not as 0.00×', () => {
    const { report } = reportOf([{ figure: 'changedAfter export', value: run([5.3]), unit: 'ms', baseline: { name: 'whole', value: run([2238]) } }])
    expect(report.table()[2]).toBe('| changedAfter export | 5.30 ms (5.30–5.30) | whole: 2238 ms (2238–2238) | 1/422 | — |')
    report.recordPairs('paired', [{ v: 1 }, { v: 2 }], [{ v: 40 }, { v: 10 }], 'base', (r) => r.v, 'req/s')
    expect(report.table()[3]).toBe('| paired | 1.50 req/s (1.00–2.00) | base: 25.0 req/s (10.0–40.0) | 0.11× (1/40–0.20, 2 pairs) | — |')
  })

  test('a run without targets says so', () => {
    expect(reportOf([{ figure: 'limiter', value: run([600]), unit: 'req/s' }]).report.targetSummary()).toBe('Targets: none among these figures.')
  })

  test('a ratio against a zero baseline is not measured, and said so', () => {
    const { report } = reportOf([{ figure: 'p50', value: run([15]), unit: 'ms', baseline: { name: 'hits', value: run([0]) }, target: atMost(2, 'ratio') }])
    expect(report.table()[2]).toBe('| p50 | 15.0 ms (15.0–15.0) | hits: 0.00 ms (0.00–0.00) | — | ≤ 2×: not measured |')
    expect(report.targetSummary()).toBe('Targets: 0 met, 0 missed, 1 not measured.')
  })
})
