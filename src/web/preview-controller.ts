// Preview: the first rows of the query, with names and local times, and how many tickets match.
// Its table stays until the next preview, whatever else the analyst does meanwhile.

import type { Ticket } from '../client/index.ts'
import type { ActionContext } from './actions.ts'
import { fetchFirstTickets } from './api.ts'
import { placeNames } from './places.ts'
import { renderPreview } from './preview.ts'

/** Rows the preview shows of the page it reads. */
const PREVIEW_ROWS = 20

export interface PreviewElements {
  section: HTMLElement
  count: HTMLElement
  table: HTMLTableElement
}

/** "6 tickets match; all are shown." or "More than 500 tickets match; the first 20 are shown …". */
export function countLine(items: readonly Ticket[], more: boolean, shown: number): string {
  const count = more ? `More than ${items.length} tickets match` : `${items.length} ticket${items.length === 1 ? '' : 's'} match${items.length === 1 ? 'es' : ''}`
  const rows = items.length > shown ? `the first ${shown} are shown` : 'all are shown'
  return `${count}; ${rows}${more ? ' (the download has them all)' : ''}.`
}

export class PreviewController {
  constructor(
    private readonly els: PreviewElements,
    private readonly page: ActionContext,
  ) {
    // Enter in a date field submits the query form: that previews (Preview is its submit button).
    page.range.onSubmit((event) => void this.preview(event))
  }

  clear(): void {
    this.els.section.hidden = true
    this.els.table.replaceChildren()
    this.els.count.textContent = ''
  }

  private async preview(event: Event): Promise<void> {
    event.preventDefault()
    const { feedback, token, range, actions } = this.page
    feedback.clear()
    const query = range.read()
    if (!query) return
    // A new preview replaces the old one, a failed one too: rows of another query would mislead.
    this.clear()
    feedback.progress('Loading the preview…')
    await actions.run(async () => {
      try {
        const { items, more, limits } = await fetchFirstTickets(query.params, token.token)
        token.noteLimits(limits)
        if (items.length === 0) {
          feedback.progress(`No tickets match: ${query.summary}.`)
          return
        }
        const shown = items.slice(0, PREVIEW_ROWS)
        renderPreview(this.els.table, shown, { names: placeNames(token.organisation?.locations ?? []), demo: Boolean(token.organisation?.demo), clock: query.clock })
        const line = countLine(items, more, shown.length)
        this.els.count.textContent = `${line} Times are in ${query.clock.zone}. Selection: ${query.summary}.`
        this.els.section.hidden = false
        feedback.progress(line)
        this.els.section.scrollIntoView({ block: 'start' })
      } catch (error) {
        feedback.progress('')
        token.handleProblem(error, 'query')
      }
    })
  }
}
