// The analyst's export page. Plain browser JavaScript, no build step, nothing loaded from another host.
// The token lives in sessionStorage only: never in a URL, never in a log.

const TOKEN_KEY = 'queue-analytics-token'
const MAX_DAYS = 90
const DAY_MS = 86_400_000

const $ = (id) => document.getElementById(id)
const els = {
  tokenForm: $('token-form'), token: $('token'), forget: $('forget-token'),
  queryForm: $('query-form'), from: $('from'), to: $('to'), places: $('places'), placesList: $('places-list'),
  preview: $('preview'), download: $('download'), cancel: $('cancel'),
  message: $('message'), progress: $('progress'), demo: $('demo-notice'),
  previewSection: $('preview-section'), previewTable: $('preview-table'),
}

let running = null // { controller, writable } of the download in progress
let countdown = null

// ---- messages ---------------------------------------------------------------------------------

function showMessage(text, kind = 'error') {
  clearInterval(countdown)
  els.message.hidden = false
  els.message.className = kind
  els.message.textContent = text
}

function clearMessage() {
  clearInterval(countdown)
  els.message.hidden = true
  els.message.textContent = ''
}

/** A failed API answer, with what is needed to explain it. */
class ApiProblem extends Error {
  constructor(status, body, headers) {
    super(body?.message ?? `HTTP ${status}`)
    this.status = status
    this.body = body ?? {}
    this.headers = headers
  }
}

/** Turns any failure into a sentence a person understands (and a countdown for rate limits). */
function explain(error) {
  if (error?.name === 'AbortError') return showMessage('The download was cancelled.', 'info')
  if (!(error instanceof ApiProblem)) return showMessage('The server could not be reached. Check your connection and try again.')
  const { status, body, headers } = error
  if (status === 401) return showMessage('This token was not accepted: it may be mistyped, revoked, or from another installation. Paste a current token.')
  if (status === 402) return showMessage('The API feature is not enabled for this organisation. Ask an administrator to enable it.')
  if (status === 400) return showMessage(`The request was not accepted: ${body.message ?? 'invalid parameters.'}`)
  if (status === 503) return showMessage("The organisation's data cannot be read right now. Please try again in a few minutes.")
  if (status === 429 && body.error === 'demo_quota_exceeded') {
    const at = new Date(body.resetAt)
    return showMessage(`This demo organisation has used its ${body.limit} requests for today. The quota resets at ${at.toLocaleString()} (your local time).`)
  }
  if (status === 429) {
    let seconds = Number(headers.get('Retry-After') ?? body.retryAfter ?? 1)
    const tick = () => {
      els.message.textContent = seconds > 0
        ? `Too many requests in the last minute. You can try again in ${seconds} second${seconds === 1 ? '' : 's'}.`
        : 'You can try again now.'
      if (seconds-- <= 0) clearInterval(countdown)
    }
    showMessage('')
    tick()
    countdown = setInterval(tick, 1000)
    return
  }
  return showMessage(`Something went wrong on the server (HTTP ${status}). Request id: ${body.requestId ?? 'unknown'}.`)
}

// ---- API --------------------------------------------------------------------------------------

function token() {
  return sessionStorage.getItem(TOKEN_KEY)
}

async function api(path, signal) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${token()}` }, signal })
  if (!response.ok) {
    const body = await response.json().catch(() => null)
    throw new ApiProblem(response.status, body, response.headers)
  }
  return response
}

/** A demo organisation's answers carry a "day" quota in RateLimit-Policy; paid ones do not. */
function noteDemo(response) {
  const policy = response.headers.get('RateLimit-Policy') ?? ''
  els.demo.hidden = !(policy.includes('"day"') || response.headers.get('X-Service-Demo') === '1')
}

// ---- the form ---------------------------------------------------------------------------------

function isoDay(ms) {
  return new Date(ms).toISOString().slice(0, 10)
}

function defaultRange() {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS
  els.to.value = isoDay(today)
  els.from.value = isoDay(today - 29 * DAY_MS)
}

/** The query of the form, or null with a message when the range is not valid. */
function currentQuery() {
  const from = Date.parse(`${els.from.value}T00:00:00Z`)
  const toDay = Date.parse(`${els.to.value}T00:00:00Z`)
  if (Number.isNaN(from) || Number.isNaN(toDay)) {
    showMessage('Choose both a From and a To date.')
    return null
  }
  const to = toDay + DAY_MS // the To day is included: the API's bound is exclusive
  if (to <= from) {
    showMessage('The To date must be on or after the From date.')
    return null
  }
  const days = (to - from) / DAY_MS
  if (days > MAX_DAYS) {
    showMessage(`That range is ${days} days; one file covers at most ${MAX_DAYS}. Shorten the range, or download several files.`)
    return null
  }
  const params = new URLSearchParams({ from: isoDay(from), to: isoDay(to) })
  for (const input of els.queryForm.querySelectorAll('input[type="checkbox"]:checked')) params.append(input.name, input.value)
  return params
}

function renderPlaces(locations) {
  els.placesList.replaceChildren()
  if (locations.length === 0) {
    els.placesList.innerHTML = '<p class="hint">This organisation has no locations yet.</p>'
    return
  }
  for (const location of locations) {
    const box = document.createElement('div')
    box.className = 'location'
    const label = document.createElement('label')
    const input = Object.assign(document.createElement('input'), { type: 'checkbox', name: 'locationId', value: location.id })
    label.append(input, ` ${location.name}`)
    box.append(label)
    if (location.queues.length > 0) {
      const queues = document.createElement('div')
      queues.className = 'checks'
      queues.setAttribute('role', 'group')
      queues.setAttribute('aria-label', `Queues of ${location.name}`)
      for (const queue of location.queues) {
        const queueLabel = document.createElement('label')
        const queueInput = Object.assign(document.createElement('input'), { type: 'checkbox', name: 'queueId', value: queue.id })
        queueLabel.append(queueInput, ` ${queue.name}${queue.status === 'ACTIVE' ? '' : ` (${queue.status.toLowerCase()})`}`)
        queues.append(queueLabel)
      }
      box.append(queues)
    }
    els.placesList.append(box)
  }
}

async function loadQueues() {
  if (!token()) return
  clearMessage()
  els.progress.textContent = 'Loading locations and queues…'
  try {
    const response = await api('/v1/queues')
    noteDemo(response)
    renderPlaces((await response.json()).locations)
    els.places.disabled = false
    els.progress.textContent = 'Token accepted.'
  } catch (error) {
    els.progress.textContent = ''
    explain(error)
  }
}

// ---- preview ----------------------------------------------------------------------------------

const COLUMNS = ['id', 'number', 'queueId', 'locationId', 'status', 'createdAt', 'calledAt', 'completedAt', 'cancelledAt', 'skippedAt', 'noShowAt', 'calledByDeviceSessionId']

async function preview() {
  clearMessage()
  const params = currentQuery()
  if (!params) return
  params.set('limit', '10')
  try {
    const response = await api(`/v1/tickets?${params}`)
    noteDemo(response)
    const { items } = await response.json()
    const head = `<thead><tr>${COLUMNS.map((c) => `<th scope="col">${c}</th>`).join('')}</tr></thead>`
    els.previewTable.innerHTML = head
    const body = document.createElement('tbody')
    for (const item of items) {
      const row = document.createElement('tr')
      for (const column of COLUMNS) row.append(Object.assign(document.createElement('td'), { textContent: item[column] ?? '' }))
      body.append(row)
    }
    els.previewTable.append(body)
    els.previewSection.hidden = false
    els.progress.textContent = items.length === 0 ? 'No tickets match this selection.' : `Showing the first ${items.length} tickets.`
  } catch (error) {
    explain(error)
  }
}

// ---- download ---------------------------------------------------------------------------------

function fileNameOf(response) {
  const match = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')
  return match ? match[1] : 'tickets.csv'
}

function formatBytes(bytes) {
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`
}

async function download(event) {
  event.preventDefault()
  clearMessage()
  const params = currentQuery()
  if (!params) return
  const controller = new AbortController()
  running = { controller, writable: null }
  els.cancel.disabled = false
  els.download.disabled = true
  try {
    // Ask for the file first: the picker needs the click that started this.
    let handle = null
    if ('showSaveFilePicker' in window) {
      handle = await window.showSaveFilePicker({ suggestedName: 'tickets.csv', types: [{ description: 'CSV', accept: { 'text/csv': ['.csv'] } }] })
    }
    els.progress.textContent = 'Starting the export…'
    const response = await api(`/v1/exports/tickets.csv?${params}`, controller.signal)
    noteDemo(response)
    const name = fileNameOf(response)
    const reader = response.body.getReader()
    const chunks = []
    if (handle) running.writable = await handle.createWritable()
    let bytes = 0
    let lines = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      bytes += value.byteLength
      for (let i = 0; i < value.length; i++) if (value[i] === 10) lines++
      if (running.writable) await running.writable.write(value)
      else chunks.push(value)
      els.progress.textContent = `Received ${Math.max(0, lines - 1).toLocaleString()} rows (${formatBytes(bytes)})…`
    }
    if (running.writable) {
      await running.writable.close()
    } else {
      // No File System Access API: the file is assembled in memory, then saved.
      const url = URL.createObjectURL(new Blob(chunks, { type: 'text/csv' }))
      const link = Object.assign(document.createElement('a'), { href: url, download: name })
      document.body.append(link)
      link.click()
      link.remove()
      setTimeout(() => URL.revokeObjectURL(url), 60_000)
    }
    const demo = response.headers.get('X-Service-Demo') === '1' ? ' It is marked as demo data.' : ''
    els.progress.textContent = `Downloaded ${name}: ${Math.max(0, lines - 1).toLocaleString()} rows (${formatBytes(bytes)}).${demo}`
  } catch (error) {
    await running?.writable?.abort().catch(() => undefined)
    els.progress.textContent = ''
    explain(error)
  } finally {
    running = null
    els.cancel.disabled = true
    els.download.disabled = false
  }
}

// ---- wiring -----------------------------------------------------------------------------------

els.tokenForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const value = els.token.value.trim()
  if (!value) return
  sessionStorage.setItem(TOKEN_KEY, value)
  els.token.value = ''
  els.token.placeholder = 'Token in use for this tab'
  loadQueues()
})
els.forget.addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY)
  els.token.placeholder = ''
  els.places.disabled = true
  els.placesList.innerHTML = '<p class="hint">Use a token to load your locations and queues.</p>'
  els.demo.hidden = true
  els.progress.textContent = 'Token forgotten.'
})
els.preview.addEventListener('click', preview)
els.queryForm.addEventListener('submit', download)
els.cancel.addEventListener('click', () => running?.controller.abort())

defaultRange()
if (token()) {
  els.token.placeholder = 'Token in use for this tab'
  loadQueues()
}
