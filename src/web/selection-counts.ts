// The tickets last counted for a selection, by the charts on show or by the download's own count
// before an .xlsx (the API gives no count short of the export itself). The download reads it to
// refuse an .xlsx over a sheet's rows before the file starts.

import type { PageQuery } from './range-controller.ts'

/** What makes two queries the same rows: the API's query (instants, queues, statuses) and, in each location's own days, every location's zone. */
function keyOf(query: PageQuery): string {
  return `${query.params}|${query.zones ? [...query.zones.byLocation].join(';') : ''}`
}

export interface SelectionCount {
  tickets: number
  by: 'charts' | 'download'
}

export class SelectionCounts {
  private last: { key: string; count: SelectionCount } | null = null

  /** `tickets` of `query` (the rows of its names file: in each location's own days, the charts count the same tickets). */
  note(query: PageQuery, tickets: number, by: SelectionCount['by']): void {
    this.last = { key: keyOf(query), count: { tickets, by } }
  }

  /** The last count of the same selection, else null. */
  of(query: PageQuery): SelectionCount | null {
    return this.last?.key === keyOf(query) ? this.last.count : null
  }

  clear(): void {
    this.last = null
  }
}
