// The analyst's export page: wires the form to the API. TypeScript modules bundled by the server
// (src/web/routes.ts) with the client as a module of its own; nothing loaded from another host.
// Every API call goes through api.ts.

import { ApiResponseError, compactInstant, type Ticket } from '../client/index.ts'
import { fetchFirstTickets, fetchLocations, limitsShownBy, startExport, ticketQuery, type PageLimits } from './api.ts'
import { computeCharts, type ChartsProgress } from './charts/run.ts'
import { createFeedback } from './feedback.ts'
import { defaultRange, describeRange, readRange, type ReadRange } from './range.ts'
import { placeNames, readPlaces, renderPlaces, type PlaceSelection } from './places.ts'
import { renderPreview } from './preview.ts'
import { SaveFailed, SaveProblem, canPickFile, saveExport } from './save.ts'
import { forgetSession, rememberOrganisation, rememberedOrganisation, storeToken, storeZone, storedToken, storedZone, tokenHint, type Organisation } from './session.ts'
import { LocalClock, browserTimeZone, canonicalTimeZone, dayKey, describeOffset, knownTimeZones, type DayNumber } from './zone.ts'

/** Rows the preview shows of the page it reads. */
const PREVIEW_ROWS = 20
/** Bun refuses request lines over 16 KiB; stay well below with the ticked queues' ids. */
const MAX_QUERY_CHARS = 12_000

/** The page's element of that id (index.html has every one this page names). */
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T
const input = (id: string) => $<HTMLInputElement>(id)
const button = (id: string) => $<HTMLButtonElement>(id)
const els = {
  tokenForm: $<HTMLFormElement>('token-form'), token: input('token'), forget: button('forget-token'), tokenStatus: $('token-status'),
  queryForm: $<HTMLFormElement>('query-form'), from: input('from'), to: input('to'), toHelp: $('to-help'), places: $<HTMLFieldSetElement>('places'), placesList: $('places-list'),
  statuses: $('statuses'), summary: $('summary'),
  preview: button('preview'), download: button('download'), saveAs: button('save-as'), cancel: button('cancel'), actionsHint: $('actions-hint'),
  progress: $('progress'), demo: $('demo-notice'), quota: $('quota'),
  previewSection: $('preview-section'), previewCount: $('preview-count'), previewTable: $<HTMLTableElement>('preview-table'),
  zone: input('zone'), zoneNames: $('zone-names'), zoneHelp: $('zone-help'), charts: button('charts'), progressBar: $<HTMLProgressElement>('progress-bar'),
  chartsSection: $('charts-section'), chartsSummary: $('charts-summary'), chartsList: $('charts-list'),
}
const feedback = createFeedback({
  regions: { token: $('token-message'), range: $('range-message'), query: $('message') },
  progress: els.progress,
})

const state: {
  token: string | null
  /** The token's organisation, once known. */
  organisation: Organisation | null
  /** Whether the quota figures were read by this page load (not remembered from an earlier one). */
  freshQuota: boolean
  busy: boolean
  /** The download or the charts in progress (one at a time: the actions wait while one runs), for Cancel. */
  running: AbortController | null
  /** The time zone whose local days the range means, and its clock. */
  clock: LocalClock
} = {
  token: storedToken(),
  organisation: null,
  freshQuota: false,
  busy: false,
  running: null,
  clock: new LocalClock(canonicalTimeZone(storedZone() ?? '') ?? browserTimeZone()),
}

// ---- what the page shows about the token and its organisation ---------------------------------

function listNames(names: string[]): string {
  if (names.length <= 3) return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0]!
  return `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`
}

/** The API tells no organisation name: the token's organisation is shown by its locations. */
function showTokenStatus() {
  if (!state.token) {
    els.tokenStatus.textContent = 'No token in use.'
    return
  }
  let text = `Token ${tokenHint(state.token)} is in use for this tab.`
  const organisation = state.organisation
  if (organisation) {
    const names = [...placeNames(organisation.locations).locations.values()]
    const kind = organisation.demo ? 'a demo organisation' : 'the organisation'
    text += names.length === 0
      ? ` It belongs to ${kind} that has no locations yet.`
      : ` It belongs to ${kind} with ${names.length === 1 ? 'the location' : `${names.length} locations:`} ${listNames(names)}.`
  }
  els.tokenStatus.textContent = text
}

function showQuota() {
  const { demo, day, seenAt } = state.organisation ?? { demo: false, day: null, seenAt: 0 }
  els.demo.hidden = !demo
  if (!day) {
    els.quota.textContent = ''
    return
  }
  const asOf = state.freshQuota ? '' : ` (as of ${new Date(seenAt).toLocaleTimeString()})`
  els.quota.textContent = day.remaining! > 0
    ? `${day.remaining} of ${day.limit} requests left today${asOf}; each preview or download uses one.`
    : `No requests left today${asOf}: the quota of ${day.limit} resets at ${new Date(seenAt + day.resetSeconds! * 1000).toLocaleTimeString()} (your local time).`
}

/** Takes in what an answer's rate-limit headers said (demo or not, the day's quota). */
function noteLimits(limits: PageLimits) {
  if (!state.organisation) return
  Object.assign(state.organisation, { demo: limits.demo, day: limits.day, seenAt: Date.now() })
  state.freshQuota = true
  rememberOrganisation(state.token!, state.organisation)
  showQuota()
  showTokenStatus()
}

function updateActions() {
  const ready = Boolean(state.token) && !state.busy
  els.preview.disabled = !ready
  els.download.disabled = !ready
  els.charts.disabled = !ready
  els.actionsHint.hidden = Boolean(state.token)
}

function setBusy(busy: boolean) {
  state.busy = busy
  updateActions()
}

function showOrganisation(organisation: Organisation) {
  state.organisation = organisation
  renderPlaces(els.placesList, organisation.locations, updateSummary)
  els.places.disabled = false
  showQuota()
  showTokenStatus()
  updateActions()
  updateSummary()
}

/** Old previews, progress and messages go as soon as something new is asked. */
function clearResults() {
  feedback.clear()
  feedback.progress('')
  els.previewSection.hidden = true
  els.previewTable.replaceChildren()
  els.previewCount.textContent = ''
  els.chartsSection.hidden = true
  els.progressBar.hidden = true
}

function dropToken() {
  state.running?.abort()
  forgetSession()
  state.token = null
  state.organisation = null
  els.places.disabled = true
  els.placesList.innerHTML = '<p class="hint">Use a token to load your locations and queues.</p>'
  els.demo.hidden = true
  els.quota.textContent = ''
  showTokenStatus()
  updateActions()
  updateSummary()
}

/** A failed call: a token that is no longer accepted is dropped and explained next to the token field. */
function handleProblem(error: unknown, region: 'token' | 'query') {
  const limits = limitsShownBy(error)
  if (limits) noteLimits(limits)
  if (error instanceof ApiResponseError && (error.status === 401 || error.status === 402)) {
    dropToken()
    els.token.focus()
    feedback.explain(error, 'token')
    return
  }
  feedback.explain(error, region)
}

// ---- the query ----------------------------------------------------------------------------------

function checkedStatuses() {
  return [...els.statuses.querySelectorAll<HTMLInputElement>('input:checked')].map((box) => ({ value: box.value, label: box.parentElement!.textContent!.trim() }))
}

function describeSelection(places: PlaceSelection, statuses: { label: string }[]): string {
  const queues = places.queueIds.length === 0 || places.all
    ? 'all queues'
    : `${places.queueIds.length} queue${places.queueIds.length === 1 ? '' : 's'} in ${places.locationCount} location${places.locationCount === 1 ? '' : 's'}`
  const states = statuses.length === 0 || statuses.length === 6 ? 'all statuses' : `status ${listNames(statuses.map((s) => s.label))}`
  return `${queues}, ${states}`
}

function readSelection() {
  return { places: readPlaces(els.placesList, state.organisation?.locations ?? []), statuses: checkedStatuses() }
}

/** The summary line above the buttons and the file-name hint next to To, kept in step with the form. */
function updateSummary() {
  const range = readRange(els.from.value, els.to.value, state.clock)
  const { places, statuses } = readSelection()
  const what = describeSelection(places, statuses)
  els.summary.textContent = range.ok ? `Will export: ${what}, ${describeRange(range)} (${range.days} day${range.days === 1 ? '' : 's'}).` : `Will export: ${what}, once the dates are valid.`
  els.toHelp.textContent = range.ok
    ? `To is included: the file name ends with the day after it (…_${compactInstant(range.toMs)}.csv), because the API's end is exclusive.`
    : "To is included: the file name ends with the day after it, because the API's end is exclusive."
}

/**
 * The query of the form, or null after saying what to fix. The charts take any range (the client
 * splits it into windows of 90 days); a file covers at most 90 days.
 */
/** What the form asks: the API's parameters, the local days, and the selection in words. */
interface PageQuery {
  params: URLSearchParams
  selection: string
  summary: string
  range: ReadRange
}

function currentQuery(purpose: 'file' | 'charts' = 'file'): PageQuery | null {
  els.from.removeAttribute('aria-invalid')
  els.to.removeAttribute('aria-invalid')
  const range = readRange(els.from.value, els.to.value, state.clock, purpose === 'charts' ? null : undefined)
  if (!range.ok) {
    const field = range.field === 'from' ? els.from : els.to
    field.setAttribute('aria-invalid', 'true')
    field.focus()
    feedback.show('range', range.message)
    return null
  }
  const { places, statuses } = readSelection()
  // The zone's midnights as UTC instants: the API's days are UTC days, the analyst's are local.
  const params = new URLSearchParams({ from: new Date(range.fromMs).toISOString(), to: new Date(range.toMs).toISOString() })
  // All queues ticked is the same as none: the query then names no queue at all.
  if (!places.all) for (const id of places.queueIds) params.append('queueId', id)
  for (const status of statuses) params.append('status', status.value)
  if (params.toString().length > MAX_QUERY_CHARS) {
    feedback.show('query', `${places.queueIds.length} queues are too many for one request: tick fewer, or none for all queues.`)
    return null
  }
  const selection = describeSelection(places, statuses)
  return { params, selection, summary: `${selection}, ${describeRange(range)}`, range }
}

// ---- actions --------------------------------------------------------------------------------------

async function loadOrganisation(token: string) {
  const { locations, limits } = await fetchLocations(token)
  state.token = token
  state.freshQuota = true
  const organisation = { locations, demo: limits.demo, day: limits.day, seenAt: Date.now() }
  showOrganisation(organisation)
  rememberOrganisation(token, organisation)
}

async function useToken(event: Event) {
  event.preventDefault()
  const value = els.token.value.trim()
  if (!value) {
    els.token.focus()
    feedback.show('token', 'Paste a token first.')
    return
  }
  clearResults()
  feedback.progress('Checking the token…')
  try {
    await loadOrganisation(value)
    // Kept only once accepted: a rejected token is never stored nor shown as in use.
    storeToken(value)
    els.token.value = ''
    feedback.progress('')
  } catch (error) {
    feedback.progress('')
    // 401/402: this token will not work, so it is not kept, not even in the field.
    if (error instanceof ApiResponseError && (error.status === 401 || error.status === 402)) els.token.value = ''
    els.token.focus()
    feedback.explain(error, 'token')
  }
}

function countLine(items: Ticket[], more: boolean, shown: number): string {
  const count = more ? `More than ${items.length} tickets match` : `${items.length} ticket${items.length === 1 ? '' : 's'} match${items.length === 1 ? 'es' : ''}`
  const rows = items.length > shown ? `the first ${shown} are shown` : 'all are shown'
  return `${count}; ${rows}${more ? ' (the download has them all)' : ''}.`
}

async function preview(event: Event) {
  event.preventDefault()
  clearResults()
  const query = currentQuery()
  if (!query) return
  feedback.progress('Loading the preview…')
  setBusy(true)
  try {
    const { items, more, limits } = await fetchFirstTickets(query.params, state.token)
    noteLimits(limits)
    if (items.length === 0) {
      feedback.progress(`No tickets match: ${query.summary}.`)
      return
    }
    const shown = items.slice(0, PREVIEW_ROWS)
    renderPreview(els.previewTable, shown, { names: placeNames(state.organisation?.locations ?? []), demo: Boolean(state.organisation?.demo) })
    const line = countLine(items, more, shown.length)
    els.previewCount.textContent = `${line} Selection: ${query.summary}.`
    els.previewSection.hidden = false
    feedback.progress(line)
    els.previewSection.scrollIntoView({ block: 'start' })
  } catch (error) {
    feedback.progress('')
    handleProblem(error, 'query')
  } finally {
    setBusy(false)
  }
}

function formatBytes(bytes: number): string {
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`
}

/** When the Save dialog may no longer open by itself (the click is too long ago), a fresh click opens it. */
function waitForSaveClick(name: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    els.saveAs.hidden = false
    feedback.show('query', `The server is ready. Press “Choose where to save” to pick a place for ${name}.`, 'info')
    els.saveAs.focus()
    els.saveAs.onclick = () => {
      els.saveAs.hidden = true
      feedback.clear()
      resolve()
    }
    signal.addEventListener('abort', () => reject(new SaveProblem('The download was cancelled; nothing was saved.', 'info')), { once: true })
  })
}

function explainFailure(failure: SaveFailed) {
  const cause = failure.cause as Error | undefined
  const what = cause instanceof SaveProblem
    ? cause.message
    : cause?.name === 'AbortError' ? 'The download was cancelled.' : 'The transfer broke off before the end of the file.'
  const left = failure.leftover
    ? ` An empty file named ${failure.leftover} is left where you chose to save it; delete it.`
    : ' No file was left behind.'
  feedback.show('query', what + left, cause?.name === 'AbortError' ? 'info' : 'error')
}

/**
 * Runs the download or the charts: the other actions wait and Cancel aborts `signal` until it
 * ends, however it ends. `work` explains its own failures.
 */
async function runCancellable(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const controller = new AbortController()
  state.running = controller
  setBusy(true)
  els.cancel.disabled = false
  try {
    await work(controller.signal)
  } finally {
    state.running = null
    els.cancel.disabled = true
    setBusy(false)
  }
}

async function download() {
  clearResults()
  const query = currentQuery()
  if (!query) return
  await runCancellable(async (signal) => {
    feedback.progress('Asking the server for the file…')
    try {
      await downloadFile(query.params, signal)
    } catch (error) {
      feedback.progress('')
      if (error instanceof SaveFailed) explainFailure(error)
      else if (error instanceof SaveProblem) feedback.show('query', error.message, error.kind)
      else handleProblem(error, 'query')
    } finally {
      els.saveAs.hidden = true
    }
  })
}

/** Starts the export and saves it as it streams (to the file the analyst picks, where the browser can). */
async function downloadFile(params: URLSearchParams, signal: AbortSignal) {
  const exported = await startExport(params, state.token, signal)
  noteLimits(exported.limits)
  feedback.progress(canPickFile() ? `The server is ready: choose where to save ${exported.name}.` : `Receiving ${exported.name}…`)
  const saved = await saveExport(exported, {
    askForClick: () => waitForSaveClick(exported.name, signal),
    onProgress: ({ rows, bytes }) => feedback.progress(`Received ${rows.toLocaleString()} rows (${formatBytes(bytes)})…`),
    signal,
  })
  const size = `${saved.rows.toLocaleString()} rows (${formatBytes(saved.bytes)})`
  const demo = exported.limits.demo ? ' It is marked as demo data.' : ''
  feedback.progress(saved.picked
    ? `Saved ${saved.savedAs}: ${size}.${saved.savedAs === exported.name ? '' : ` (The server named it ${exported.name}.)`}${demo}`
    : `Downloaded ${saved.savedAs}: ${size}.${demo}`)
}

// ---- the time zone and the charts -----------------------------------------------------------------

function showZone() {
  const zone = state.clock.zone
  els.zone.value = zone
  els.zone.removeAttribute('aria-invalid')
  els.zoneHelp.textContent = `Days are local days in ${zone} (${describeOffset(state.clock.offset(Date.now()))} now): From starts at its midnight there and To ends at the midnight after it.`
}

/**
 * Takes the zone typed or picked in the control: a zone the browser knows becomes the page's
 * (remembered for the tab) and redraws the charts on show; anything else is refused, in a sentence.
 */
function useZone() {
  const typed = els.zone.value.trim()
  const zone = canonicalTimeZone(typed)
  if (!zone) {
    els.zone.setAttribute('aria-invalid', 'true')
    els.zone.focus()
    feedback.show('range', `“${typed}” is not a time zone this browser knows. Type an IANA name such as Europe/Amsterdam or America/New_York, or pick one from the list; the days stay in ${state.clock.zone}.`)
    return
  }
  feedback.clear()
  const changed = zone !== state.clock.zone
  state.clock = new LocalClock(zone)
  storeZone(zone)
  showZone()
  updateSummary()
  if (changed && !els.chartsSection.hidden && !state.busy) void charts()
}

function chartsProgress(progress: ChartsProgress) {
  els.progressBar.hidden = false
  els.progressBar.value = progress.fraction
  feedback.progress(`Reading tickets for the charts: ${progress.tickets.toLocaleString()} so far (${formatBytes(progress.bytes)}, ${Math.round(progress.fraction * 100)}% of the range)…`)
}

/** A file-name-safe stem for the numbers' CSV files: the local days and the zone they were computed for. */
function numbersFileStem(range: ReadRange, zone: string): string {
  const day = (value: DayNumber) => dayKey(value).replaceAll('-', '')
  return `${day(range.firstDay)}-${day(range.lastDay)}_${zone.replaceAll('/', '-')}`.replace(/[^A-Za-z0-9_+-]/g, '')
}

async function charts() {
  clearResults()
  const query = currentQuery('charts')
  if (!query) return
  await runCancellable(async (signal) => {
    els.progressBar.value = 0
    els.progressBar.hidden = false
    feedback.progress('Asking the server for the tickets…')
    try {
      await drawChartsOf(query, state.clock.zone, signal)
    } catch (error) {
      feedback.progress('')
      if ((error as Error | undefined)?.name === 'AbortError') feedback.show('query', 'The charts were cancelled; nothing was drawn.', 'info')
      else handleProblem(error, 'query')
    } finally {
      els.progressBar.hidden = true
    }
  })
}

/** Computes the charts of `query` in the days of `zone` and draws them with their tables. */
async function drawChartsOf(query: PageQuery, zone: string, signal: AbortSignal) {
  const queueNames = new Map([...placeNames(state.organisation?.locations ?? []).queues].map(([id, queue]) => [id, queue.name]))
  const [{ numbers, limits }, view] = await Promise.all([
    computeCharts({ token: state.token!, query: ticketQuery(query.params), zone, firstDay: query.range.firstDay, lastDay: query.range.lastDay, queueNames }, chartsProgress, signal),
    import('./charts/view.ts'),
  ])
  if (limits) noteLimits(limits)
  els.chartsSection.hidden = false
  const count = `${numbers.tickets.toLocaleString()} ticket${numbers.tickets === 1 ? '' : 's'}`
  // What was asked, not the form as it is now: it may have been changed while the tickets were read.
  els.chartsSummary.textContent = `${count} created ${describeRange(query.range)}, in days of ${zone}: ${query.selection}.`
  view.drawCharts(els.chartsList, numbers, numbersFileStem(query.range, zone))
  feedback.progress(numbers.tickets === 0 ? `No tickets match: the charts are empty. Selection: ${query.summary}.` : `Charts drawn from ${count} (days in ${zone}).`)
  els.chartsSection.scrollIntoView({ block: 'start' })
}

function forget() {
  dropToken()
  clearResults()
  els.token.value = ''
  // Said under the token field, next to the button that did it.
  els.tokenStatus.textContent = 'No token in use: the token was forgotten from this tab.'
}

// ---- wiring ---------------------------------------------------------------------------------------

els.tokenForm.addEventListener('submit', useToken)
els.forget.addEventListener('click', forget)
// Enter in a date field submits this form: that previews (the Preview button is its submit button).
els.queryForm.addEventListener('submit', preview)
els.download.addEventListener('click', download)
els.cancel.addEventListener('click', () => state.running?.abort())
els.charts.addEventListener('click', charts)
els.queryForm.addEventListener('input', updateSummary)
els.zone.addEventListener('change', useZone)
// Enter in the zone field takes the zone; it does not submit the form (that would preview).
els.zone.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter') return
  event.preventDefault()
  useZone()
})

els.zoneNames.replaceChildren(...knownTimeZones().map((zone) => Object.assign(document.createElement('option'), { value: zone })))
showZone()
const range = defaultRange(Date.now(), state.clock)
els.from.value = range.from
els.to.value = range.to
showTokenStatus()
updateActions()
updateSummary()
if (state.token) {
  // Reloading the page shows what was last seen with this token instead of asking again.
  const remembered = rememberedOrganisation(state.token)
  if (remembered) showOrganisation(remembered)
  else loadOrganisation(state.token).catch((error) => handleProblem(error, 'token'))
}
