// The tickets the charts on show counted, and for which selection: the one count the page has
// before a file is asked for (the API gives none short of the export itself). The download reads
// it to refuse an .xlsx over a sheet's rows before anything starts.

import type { PageQuery } from './range-controller.ts'

/** What makes two queries the same rows: the API's query (instants, queues, statuses) and, in each location's own days, every location's zone. */
function keyOf(query: PageQuery): string {
  return `${query.params}|${query.zones ? [...query.zones.byLocation].join(';') : ''}`
}

export class SelectionCounts {
  private last: { key: string; tickets: number } | null = null

  /** The charts of `query` counted `tickets` (the rows of its names file: in each location's own days, the same tickets). */
  note(query: PageQuery, tickets: number): void {
    this.last = { key: keyOf(query), tickets }
  }

  /** The tickets of `query` if the charts on show are of the same selection, else null. */
  of(query: PageQuery): number | null {
    return this.last?.key === keyOf(query) ? this.last.tickets : null
  }

  clear(): void {
    this.last = null
  }
}
