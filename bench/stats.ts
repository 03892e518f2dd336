/** Summary statistics the benchmark reports: the median of several runs, and their range. */
export interface Summary {
  median: number
  min: number
  max: number
  runs: number
}

export function summarise(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, runs: sorted.length }
}

/** The value at quantile `q` (0.5: p50) of values sorted in ascending order. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
