// Download CSV: the API's export saved as it streams, byte for byte, or, with "Add names and
// local times" ticked, the file a spreadsheet reads as it is (names-file.ts), streamed the same way.

import type { ActionContext } from './actions.ts'
import { startExport } from './api.ts'
import { rangeProgress } from './export-progress.ts'
import { formatBytes } from './feedback.ts'
import { namesAndLocalTimes, namesFileName, workbookName } from './names-file.ts'
import { placeNames } from './places.ts'
import type { PageQuery } from './range-controller.ts'
import { SaveFailed, SaveProblem, canPickFile, lineEnds, saveExport } from './save.ts'
import { EXCEL_MAX_ROWS } from './xlsx/workbook.ts'

export interface DownloadElements {
  download: HTMLButtonElement
  saveAs: HTMLButtonElement
  /** "Download the CSV instead", offered when an .xlsx is refused before it starts. */
  csvInstead: HTMLButtonElement
  /** "Add names and local times". */
  withNames: HTMLInputElement
  /** "As an Excel workbook (.xlsx)": the file with names and local times, as a workbook. Its data-max-rows lowers the sheet's rows (tests). */
  asWorkbook: HTMLInputElement
}

/** A sheet's rows, header included: Excel's, unless the checkbox's data-max-rows says fewer. */
const maxRows = (box: HTMLInputElement) => Math.min(EXCEL_MAX_ROWS, Number(box.dataset.maxRows) || EXCEL_MAX_ROWS)

/** The file with names and local times as an .xlsx, made in a worker from the CSV as it streams. */
function asWorkbook(csv: ReadableStream<Uint8Array>, sheet: string, maxRows: number): Promise<ReadableStream<Uint8Array>> {
  const worker = new Worker('/assets/xlsx-worker.js', { type: 'module', name: 'xlsx' })
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ workbook: ReadableStream<Uint8Array> }>) => {
      // The worker ends once the workbook is read to its end or given up.
      resolve(event.data.workbook.pipeThrough(new TransformStream({ flush: () => worker.terminate() })))
    }
    worker.onerror = (event) => {
      worker.terminate()
      reject(new Error(`the .xlsx worker failed: ${event.message}`))
    }
    worker.postMessage({ csv, sheet, maxRows }, [csv as unknown as Transferable])
  })
}

export class DownloadController {
  constructor(
    private readonly els: DownloadElements,
    private readonly page: ActionContext,
  ) {
    els.download.addEventListener('click', () => void this.download())
    // The button names the file it makes: an .xlsx when the box is ticked.
    const nameButton = () => (els.download.textContent = els.asWorkbook.checked ? 'Download .xlsx' : 'Download CSV')
    els.asWorkbook.addEventListener('change', nameButton)
    nameButton()
    els.csvInstead.addEventListener('click', () => {
      els.asWorkbook.checked = false
      els.asWorkbook.dispatchEvent(new Event('change'))
      els.withNames.checked = true
      void this.download()
    })
  }

  /** Whether the last count of this selection is over a sheet's rows: then said, with the CSV offered. */
  private overSheet(query: PageQuery): boolean {
    const count = this.page.counts.of(query)
    const limit = maxRows(this.els.asWorkbook) - 1
    if (count === null || count.tickets <= limit) return false
    const by = count.by === 'charts' ? 'counted by the charts on show' : 'counted before the download'
    this.page.feedback.progress('')
    this.page.feedback.show('query', `This selection has ${count.tickets.toLocaleString()} tickets (${by}), more than the ${limit.toLocaleString()} rows an .xlsx sheet holds: no .xlsx was started. Download the CSV instead (names and local times, every row), or choose a shorter range.`)
    this.els.csvInstead.hidden = false
    this.els.csvInstead.focus()
    return true
  }

  private async download(): Promise<void> {
    const { feedback, token, range, actions } = this.page
    feedback.clear()
    this.els.csvInstead.hidden = true
    const query = range.read()
    if (!query) return
    const workbook = this.els.asWorkbook.checked
    if (workbook && this.overSheet(query)) return
    await actions.runCancellable(async (signal) => {
      try {
        // No count of this selection yet: the names file is read once and counted (nothing kept)
        // so that an .xlsx too large is said before its file starts. It costs one more export request.
        if (workbook && !this.page.counts.of(query)) {
          feedback.progress(`Counting the rows first (an .xlsx sheet holds ${(maxRows(this.els.asWorkbook) - 1).toLocaleString()})…`)
          this.page.counts.note(query, await this.countRows(query, signal), 'download')
          if (this.overSheet(query)) return
        }
        feedback.progress('Asking the server for the file…')
        await this.downloadFile(query, this.els.withNames.checked || workbook, signal, workbook)
      } catch (error) {
        feedback.progress('')
        if (error instanceof SaveFailed) this.explainFailure(error)
        else if (error instanceof SaveProblem) feedback.show('query', error.message, error.kind)
        else token.handleProblem(error, 'query')
      } finally {
        this.els.saveAs.hidden = true
      }
    })
  }

  /** The export of `query`, with names and local times added when asked; `fraction` follows the range read. */
  private async exportBody(query: PageQuery, withNames: boolean, signal: AbortSignal, workbook: boolean): Promise<{ body: ReadableStream<Uint8Array>; name: string; exported: Awaited<ReturnType<typeof startExport>>; fraction: () => number }> {
    const { token } = this.page
    const exported = await startExport(query.params, token.token, signal)
    token.noteLimits(exported.limits)
    let fraction = 0
    let body = exported.body.pipeThrough(rangeProgress(query.range.fromMs, query.range.toMs, (reached) => (fraction = reached)))
    let name = exported.name
    if (withNames) {
      const names = placeNames(token.organisation?.locations ?? [])
      body = body.pipeThrough(namesAndLocalTimes({ locations: names.locations, queues: new Map([...names.queues].map(([id, queue]) => [id, queue.name])) }, query.clock, query.zones, { first: query.range.firstDay, last: query.range.lastDay }, !workbook))
      name = namesFileName(exported.name, query.zones ? 'each-location' : query.clock.zone)
    }
    return { body, name, exported, fraction: () => fraction }
  }

  /**
   * The rows of the names file of `query`, read once and counted, nothing kept: the export's own
   * lines in one zone (the names file has its rows), through the names file in each location's
   * own days (which keeps only the tickets inside them), at about three times the cost.
   */
  private async countRows(query: PageQuery, signal: AbortSignal): Promise<number> {
    const { body } = await this.exportBody(query, Boolean(query.zones), signal, true)
    const reader = body.getReader()
    let lines = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return Math.max(0, lines - 1)
      lines += lineEnds(value)
    }
  }

  /** Starts the export and saves it as it streams (to the file the analyst picks, where the browser can). */
  private async downloadFile(query: PageQuery, withNames: boolean, signal: AbortSignal, workbook = false): Promise<void> {
    const { feedback } = this.page
    const started = await this.exportBody(query, withNames, signal, workbook)
    const { exported, fraction } = started
    let { body, name } = started
    let tickets = 0
    if (workbook) {
      // Rows counted on the CSV side (the workbook's bytes have no lines to count).
      const counted = body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          tickets += lineEnds(chunk)
          controller.enqueue(chunk)
        },
      }))
      body = await asWorkbook(counted, 'Tickets', maxRows(this.els.asWorkbook))
      name = workbookName(name)
    }
    feedback.progress(canPickFile() ? `The server is ready: choose where to save ${name}.` : `Receiving ${name}…`)
    const saved = await saveExport({ body, name }, {
      askForClick: () => this.waitForSaveClick(name, signal),
      onProgress: ({ rows, bytes }) => feedback.progress(`Received ${rows.toLocaleString()} rows (${formatBytes(bytes)}, ${Math.round(fraction() * 100)}% of the range)…`),
      signal,
      ...(workbook ? { rows: () => Math.max(0, tickets - 1) } : {}),
    })
    const size = `${saved.rows.toLocaleString()} rows (${formatBytes(saved.bytes)})`
    const demo = exported.limits.demo ? ' It is marked as demo data.' : ''
    const local = withNames ? ` Names and local times in ${query.zones ? "each location's own time zone (columns localTimeZone and localTimeZoneFrom)" : query.clock.zone} added.` : ''
    feedback.progress(saved.picked
      ? `Saved ${saved.savedAs}: ${size}.${saved.savedAs === name ? '' : ` (The server named it ${exported.name}.)`}${local}${demo}`
      : `Downloaded ${saved.savedAs}: ${size}.${local}${demo}`)
  }

  /** When the Save dialog may no longer open by itself (the click is too long ago), a fresh click opens it. */
  private waitForSaveClick(name: string, signal: AbortSignal): Promise<void> {
    const { saveAs } = this.els
    const { feedback } = this.page
    return new Promise((resolve, reject) => {
      saveAs.hidden = false
      feedback.show('query', `The server is ready. Press “Choose where to save” to pick a place for ${name}.`, 'info')
      saveAs.focus()
      saveAs.onclick = () => {
        saveAs.hidden = true
        feedback.clear()
        resolve()
      }
      signal.addEventListener('abort', () => reject(new SaveProblem('The download was cancelled; nothing was saved.', 'info')), { once: true })
    })
  }

  private explainFailure(failure: SaveFailed): void {
    const cause = failure.cause as Error | undefined
    const what = cause instanceof SaveProblem
      ? cause.message
      : /Excel's limit for one sheet/.test(cause?.message ?? '')
        ? `This selection has ${cause!.message.replace(/^.*?(more than)/, '$1')}: no .xlsx can hold it. Untick “As an Excel workbook” and download the CSV, which has every row, or choose a shorter range.`
      : cause?.name === 'AbortError' ? 'The download was cancelled.' : 'The transfer broke off before the end of the file.'
    const left = failure.leftover
      ? ` An empty file named ${failure.leftover} is left where you chose to save it; delete it.`
      : ' No file was left behind.'
    this.page.feedback.show('query', what + left, cause?.name === 'AbortError' ? 'info' : 'error')
  }
}
