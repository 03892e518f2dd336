// Charts: the four charts of the query, computed in a worker as the export streams, drawn with
// their tables. They stay on show until the next charts (drawn again when the zone changes).

import type { ActionContext } from './actions.ts'
import { ticketQuery } from './api.ts'
import { computeCharts, type ChartsProgress } from './charts/run.ts'
import type { NumbersFiles } from './charts/view.ts'
import { formatBytes } from './feedback.ts'
import { describeRange, type ReadRange } from './range.ts'
import type { PageQuery } from './range-controller.ts'
import { dayKey, localTimestamp, type DayNumber } from './zone.ts'

export interface ChartsElements {
  /** The target wait in minutes (the share called within it). */
  target: HTMLInputElement
  charts: HTMLButtonElement
  progressBar: HTMLProgressElement
  section: HTMLElement
  summary: HTMLElement
  list: HTMLElement
}

/** A file-name-safe stem for the numbers' CSV files: the local days and the zone they were computed for. */
function numbersFileStem(range: ReadRange, zone: string): string {
  const day = (value: DayNumber) => dayKey(value).replaceAll('-', '')
  return `${day(range.firstDay)}-${day(range.lastDay)}_${zone.replaceAll('/', '-')}`.replace(/[^A-Za-z0-9_+-]/g, '')
}

export class ChartsController {
  /** The numbers' CSV links of the charts on show (made with the view, once it is loaded). */
  private files: NumbersFiles | null = null

  constructor(
    private readonly els: ChartsElements,
    private readonly page: ActionContext,
  ) {
    els.charts.addEventListener('click', () => void this.charts())
    // A new target redraws the charts on show, as a new zone does.
    els.target.addEventListener('change', () => this.zoneChanged())
    // Enter in the field takes the target; it does not submit the form (that would preview).
    els.target.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return
      event.preventDefault()
      this.zoneChanged()
    })
  }

  /** The target wait in minutes, or null after saying what to fix. */
  private targetMinutes(): number | null {
    const { target } = this.els
    const minutes = target.valueAsNumber
    if (Number.isFinite(minutes) && minutes >= 0 && minutes <= 1440) {
      target.removeAttribute('aria-invalid')
      return minutes
    }
    target.setAttribute('aria-invalid', 'true')
    target.focus()
    this.page.feedback.show('query', 'The target wait must be a number of minutes from 0 to 1440 (a day), such as 10 or 7.5.')
    return null
  }

  /** A new zone redraws the charts on show (unless an action runs). */
  zoneChanged(): void {
    if (!this.els.section.hidden && !this.page.actions.isBusy()) void this.charts()
  }

  clear(): void {
    this.els.section.hidden = true
    this.els.list.replaceChildren()
    this.files?.free()
  }

  private async charts(): Promise<void> {
    const { feedback, token, range, actions } = this.page
    feedback.clear()
    const query = range.read('charts')
    if (!query) return
    const targetMinutes = this.targetMinutes()
    if (targetMinutes === null) return
    await actions.runCancellable(async (signal) => {
      this.els.progressBar.value = 0
      this.els.progressBar.hidden = false
      feedback.progress('Asking the server for the tickets…')
      try {
        await this.draw(query, targetMinutes, signal)
      } catch (error) {
        feedback.progress('')
        if ((error as Error | undefined)?.name === 'AbortError') feedback.show('query', 'The charts were cancelled; nothing was drawn.', 'info')
        else token.handleProblem(error, 'query')
      } finally {
        this.els.progressBar.hidden = true
      }
    })
  }

  private showProgress(progress: ChartsProgress): void {
    this.els.progressBar.hidden = false
    this.els.progressBar.value = progress.fraction
    this.page.feedback.progress(`Reading tickets for the charts: ${progress.tickets.toLocaleString()} so far (${formatBytes(progress.bytes)}, ${Math.round(progress.fraction * 100)}% of the range)…`)
  }

  /** Computes the charts of `query` in the days of its zone and draws them with their tables. */
  private async draw(query: PageQuery, targetMinutes: number, signal: AbortSignal): Promise<void> {
    const { feedback, token, range } = this.page
    const zone = query.clock.zone
    const request = {
      token: token.token!, query: ticketQuery(query.params), zone, firstDay: query.range.firstDay, lastDay: query.range.lastDay, places: range.queuePlaces(),
      queueZones: query.zones ? range.queueZones(query.zones) : null,
      targetMinutes,
    }
    const [{ numbers, limits }, view] = await Promise.all([computeCharts(request, (progress) => this.showProgress(progress), signal), import('./charts/view.ts')])
    if (limits) token.noteLimits(limits)
    this.page.counts.note(query, numbers.tickets, 'charts')
    this.files ??= new view.NumbersFiles()
    this.els.section.hidden = false
    const count = `${numbers.tickets.toLocaleString()} ticket${numbers.tickets === 1 ? '' : 's'}`
    // What was asked, not the form as it is now: it may have been changed while the tickets were read.
    this.els.summary.textContent = query.zones ? `${count} created ${describeRange(query.range)}: ${query.selection}.` : `${count} created ${describeRange(query.range)}, in days of ${zone}: ${query.selection}.`
    // Today, if in the range, is not over: its bar is marked, not read as a drop.
    const now = Date.now()
    const today = query.clock.local(now).day
    const partial = today >= query.range.firstDay && today <= query.range.lastDay ? { day: dayKey(today), until: query.zones ? null : localTimestamp(now, query.clock).slice(11, 16) } : null
    view.drawCharts(this.els.list, numbers, numbersFileStem(query.range, query.zones ? 'each-location' : zone), this.files, partial, Boolean(query.zones))
    const days = query.zones ? "each location's own" : zone
    feedback.progress(numbers.tickets === 0 ? `No tickets match: the charts are empty. Selection: ${query.summary}.` : `Charts drawn from ${count} (days in ${days}).`)
    this.els.section.scrollIntoView({ block: 'start' })
  }
}
