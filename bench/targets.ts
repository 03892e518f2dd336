/**
 * A figure's target, checked by code: its median (`value`, in the figure's unit) or its ratio to
 * the baseline of the same run (`ratio`) compared with a bound. The table prints it as before
 * ("≤ 1.3×", "< 2.5 s") followed by whether this run met it.
 */
export interface Target {
  of: 'value' | 'ratio'
  is: '<=' | '<' | '>=' | '>'
  bound: number
}

/** `not measured`: a ratio target on a figure without a ratio (no baseline, or a baseline of 0). */
export type TargetOutcome = 'met' | 'missed' | 'not measured'

const SYMBOL: Record<Target['is'], string> = { '<=': '≤', '<': '<', '>=': '≥', '>': '>' }

export function checkTarget(target: Target, measured: { value: number; ratio: number | undefined }): TargetOutcome {
  const actual = target.of === 'value' ? measured.value : measured.ratio
  if (actual === undefined || !Number.isFinite(actual)) return 'not measured'
  const met =
    target.is === '<=' ? actual <= target.bound : target.is === '<' ? actual < target.bound : target.is === '>=' ? actual >= target.bound : actual > target.bound
  return met ? 'met' : 'missed'
}

/** "≤ 1.3×" for a ratio, "≤ 10 ms" for a value in ms. */
export function describeTarget(target: Target, unit: string): string {
  const bound = target.of === 'ratio' ? `${target.bound}×` : `${target.bound}${unit ? ` ${unit}` : ''}`
  return `${SYMBOL[target.is]} ${bound}`
}
