import { summarise, type Summary } from './stats.ts'
import { checkTarget, describeTarget, type Target, type TargetOutcome } from './targets.ts'

/** One line of the results table. */
export interface Row {
  figure: string
  value: Summary
  unit: string
  baseline?: { name: string; value: Summary }
  /** value / baseline of each back-to-back pair, when measured in pairs; the ratio shown is their median. */
  pairRatios?: Summary
  target?: Target
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2))
const show = (s: Summary, unit: string) => `${fmt(s.median)} ${unit} (${fmt(s.min)}–${fmt(s.max)})`

/** Median of the pair ratios when paired; otherwise median / baseline median; none against a zero baseline (autocannon's whole milliseconds). */
export function ratioOf(row: Row): number | undefined {
  if (row.pairRatios) return row.pairRatios.median
  if (row.baseline && row.baseline.value.median !== 0) return row.value.median / row.baseline.value.median
  return undefined
}

/** "1.81"; a ratio under 0.1 as a fraction, "1/421", which two decimals would show as 0.00. */
const ratioNumber = (ratio: number) => (ratio > 0 && ratio < 0.1 ? `1/${Math.round(1 / ratio)}` : ratio.toFixed(2))
const fmtRatio = (ratio: number) => (ratio > 0 && ratio < 0.1 ? ratioNumber(ratio) : `${ratioNumber(ratio)}×`)

function ratioText(row: Row): string | undefined {
  if (row.pairRatios) return `${fmtRatio(row.pairRatios.median)} (${ratioNumber(row.pairRatios.min)}–${ratioNumber(row.pairRatios.max)}, ${row.pairRatios.runs} pairs)`
  const ratio = ratioOf(row)
  return ratio === undefined ? undefined : fmtRatio(ratio)
}

export function targetOutcome(row: Row): TargetOutcome | undefined {
  return row.target && checkTarget(row.target, { value: row.value.median, ratio: ratioOf(row) })
}

function targetText(row: Row): string | undefined {
  return row.target && `${describeTarget(row.target, row.unit)}: ${targetOutcome(row)}`
}

/** The figures of a run, in the order recorded; each is logged as it comes. */
export class Report {
  readonly rows: Row[] = []

  constructor(private readonly log: (line: string) => void) {}

  record(row: Row): void {
    this.rows.push(row)
    const ratio = ratioText(row)
    const target = targetText(row)
    this.log(`  ${row.figure}: ${show(row.value, row.unit)}${ratio ? ` ratio ${ratio}` : ''}${target ? ` target ${target}` : ''}`)
  }

  /** A figure measured in pairs (run i of `ours` with run i of `base`): medians of each side and the median of the pairs' ratios. */
  recordPairs<R>(figure: string, ours: R[], base: R[], baselineName: string, value: (run: R) => number, unit: string, target?: Target): void {
    this.record({
      figure,
      value: summarise(ours.map(value)),
      unit,
      baseline: { name: baselineName, value: summarise(base.map(value)) },
      pairRatios: summarise(ours.map((run, i) => value(run) / value(base[i]!))),
      target,
    })
  }

  /** The Markdown table. */
  table(): string[] {
    return [
      '| figure | result | baseline (same run) | ratio | target |',
      '|---|---|---|---|---|',
      ...this.rows.map((row) => {
        const baseline = row.baseline ? `${row.baseline.name}: ${show(row.baseline.value, row.unit)}` : '—'
        return `| ${row.figure} | ${show(row.value, row.unit)} | ${baseline} | ${ratioText(row) ?? '—'} | ${targetText(row) ?? '—'} |`
      }),
    ]
  }

  /** "Targets: 7 met, 8 missed (…)": the figures whose target this run missed, by name. */
  targetSummary(): string {
    const withTarget = this.rows.filter((row) => row.target)
    if (withTarget.length === 0) return 'Targets: none among these figures.'
    const count = (outcome: TargetOutcome) => withTarget.filter((row) => targetOutcome(row) === outcome)
    const missed = count('missed')
    const notMeasured = count('not measured')
    return [
      `Targets: ${count('met').length} met, ${missed.length} missed`,
      notMeasured.length ? `, ${notMeasured.length} not measured` : '',
      missed.length ? ` (missed: ${missed.map((row) => row.figure).join('; ')})` : '',
      '.',
    ].join('')
  }
}
