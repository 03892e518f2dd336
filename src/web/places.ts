// The locations-and-queues picker. The API combines locationId and queueId with AND, while a
// list of queues under their locations reads as "these places": so a location's box only ticks
// its queues, and the query names the ticked queues (their union), never a locationId.

import type { Location } from '../client/index.ts'

export interface PlaceNames {
  /** Location id → the name shown. */
  locations: Map<string, string>
  /** Queue id → its name and location. */
  queues: Map<string, { name: string; locationId: string }>
}

/**
 * Display names of locations and queues: a name that two locations share gets the location's
 * slug, so that "Amsterdam Centraal" and "Amsterdam Centraal (amsterdam-2)" can be told apart.
 */
export function placeNames(locations: readonly Location[]): PlaceNames {
  const seen = new Map<string, number>()
  for (const location of locations) seen.set(location.name, (seen.get(location.name) ?? 0) + 1)
  const locationNames = new Map<string, string>()
  const queues = new Map<string, { name: string; locationId: string }>()
  for (const location of locations) {
    const name = seen.get(location.name)! > 1 ? `${location.name} (${location.slug})` : location.name
    locationNames.set(location.id, name)
    for (const queue of location.queues) queues.set(queue.id, { name: queue.name, locationId: location.id })
  }
  return { locations: locationNames, queues }
}

function checkbox(attributes: { value: string; name?: string; disabled?: boolean }): HTMLInputElement {
  const box = document.createElement('input')
  box.type = 'checkbox'
  return Object.assign(box, attributes)
}

/** A location's box is ticked when all its queues are, half-ticked when some are. */
function syncLocation(box: Element): void {
  const queues = [...box.querySelectorAll<HTMLInputElement>('input[name="queueId"]')]
  const ticked = queues.filter((input) => input.checked).length
  const location = box.querySelector<HTMLInputElement>('input[data-location]')!
  location.checked = queues.length > 0 && ticked === queues.length
  location.indeterminate = ticked > 0 && ticked < queues.length
  const count = box.querySelector('.ticked')
  if (count) count.textContent = `${queues.length} queue${queues.length === 1 ? '' : 's'}${ticked > 0 ? `, ${ticked} ticked` : ''}`
}

/** From this many locations on, the list is a chain's: found by name, each location's queues folded. */
export const CHAIN_LOCATIONS = 6

/** Lower case without accents: "zurich" finds "Zürich Hauptbahnhof". */
function searchable(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
}

/** Each fold button's own setter: the search opens and closes a fold as a click would, without being one. */
const folds = new WeakMap<HTMLButtonElement, (open: boolean) => void>()

/** A location's fold button: shows or hides its queues, and says how many are ticked. */
function foldButton(queues: HTMLElement, name: string): HTMLButtonElement {
  const button = Object.assign(document.createElement('button'), { type: 'button', className: 'fold secondary' })
  button.setAttribute('aria-controls', queues.id)
  const set = (open: boolean) => {
    button.setAttribute('aria-expanded', String(open))
    // The location's name is read with the words seen, so that 30 buttons are told apart.
    button.replaceChildren(`${open ? 'Hide' : 'Show'} queues`, Object.assign(document.createElement('span'), { className: 'visually-hidden', textContent: ` of ${name}` }))
    queues.hidden = !open
  }
  // A fold the analyst opened or closed is theirs: a search no longer closes it (data-by-search).
  button.addEventListener('click', () => {
    delete button.dataset.bySearch
    set(button.getAttribute('aria-expanded') !== 'true')
  })
  folds.set(button, set)
  set(false)
  return button
}

/**
 * Fills `container` with a box per location and its queues; `onChange` runs after every tick.
 * A chain (CHAIN_LOCATIONS or more) gets a search field and a folded list: a location's box ticks
 * all its queues, its fold button shows them, so a keyboard reaches any queue in a few presses.
 */
export function renderPlaces(container: HTMLElement, locations: readonly Location[], onChange: () => void): void {
  container.replaceChildren()
  if (locations.length === 0) {
    container.append(Object.assign(document.createElement('p'), { className: 'hint', textContent: 'This organisation has no locations yet.' }))
    return
  }
  const chain = locations.length >= CHAIN_LOCATIONS
  const names = placeNames(locations)
  const boxes: HTMLElement[] = []
  for (const location of locations) {
    const box = document.createElement('div')
    box.className = 'location'
    const label = document.createElement('label')
    const input = checkbox({ value: location.id, disabled: location.queues.length === 0 })
    input.dataset.location = location.id
    // One text item beside the box, so that a long name wraps with its hint.
    const name = names.locations.get(location.id)!
    const text = Object.assign(document.createElement('span'), { textContent: name })
    if (location.queues.length === 0) text.append(Object.assign(document.createElement('span'), { className: 'hint', textContent: ' (no queues)' }))
    label.append(input, text)
    const line = document.createElement('div')
    line.className = 'location-line'
    line.append(label)
    box.append(line)
    box.dataset.search = searchable(name)
    if (location.queues.length > 0) {
      const queues = document.createElement('div')
      queues.className = 'checks'
      queues.id = `queues-${location.id}`
      queues.setAttribute('role', 'group')
      queues.setAttribute('aria-label', `Queues of ${name}`)
      for (const queue of location.queues) {
        const queueLabel = document.createElement('label')
        queueLabel.dataset.search = searchable(queue.name)
        queueLabel.append(
          checkbox({ name: 'queueId', value: queue.id }),
          ` ${queue.name}${queue.status === 'ACTIVE' ? '' : ` (${queue.status.toLowerCase()})`}`,
        )
        queues.append(queueLabel)
      }
      if (chain) {
        line.append(Object.assign(document.createElement('span'), { className: 'hint ticked', textContent: `${location.queues.length} queue${location.queues.length === 1 ? '' : 's'}` }), foldButton(queues, name))
      }
      box.append(queues)
    }
    boxes.push(box)
  }
  if (chain) container.append(...chainTools(boxes, locations.length, names.queues.size))
  else container.append(...boxes)
  container.onchange = (event) => {
    const target = event.target as HTMLInputElement
    if (target.type !== 'checkbox') return
    const box = target.closest<HTMLElement>('.location')!
    if (target.dataset.location) {
      // A location's box ticks the queues shown under it (all of them unless a search hides some).
      for (const queue of box.querySelectorAll<HTMLInputElement>('input[name="queueId"]')) {
        if (!(queue.parentElement as HTMLElement).hidden) queue.checked = target.checked
      }
    }
    syncLocation(box)
    onChange()
  }
}

/** The search field and its result line, and the list folded under one disclosure. */
function chainTools(boxes: HTMLElement[], locationCount: number, queueCount: number): HTMLElement[] {
  const search = Object.assign(document.createElement('input'), { type: 'search', id: 'places-search', autocomplete: 'off', spellcheck: false })
  const label = Object.assign(document.createElement('label'), { htmlFor: 'places-search', textContent: 'Find a location or queue' })
  const found = Object.assign(document.createElement('p'), { id: 'places-found', className: 'hint' })
  found.setAttribute('role', 'status')
  const tools = document.createElement('div')
  tools.className = 'row places-search'
  tools.append(label, search)
  const all = document.createElement('details')
  all.className = 'places-all'
  const summary = Object.assign(document.createElement('summary'), { textContent: `All ${locationCount} locations and ${queueCount} queues` })
  all.append(summary, ...boxes)
  search.addEventListener('input', () => {
    const wanted = searchable(search.value.trim())
    let shown = 0
    for (const box of boxes) {
      const queues = [...box.querySelectorAll<HTMLElement>('.checks > label')]
      const byName = wanted === '' || box.dataset.search!.includes(wanted)
      const matching = queues.filter((queue) => queue.dataset.search!.includes(wanted))
      box.hidden = !byName && matching.length === 0
      // A location found by a queue's name shows those queues only, unfolded; it is folded again
      // once the search no longer finds it by a queue (unless the analyst clicked its fold since).
      for (const queue of queues) queue.hidden = !byName && !matching.includes(queue)
      const fold = box.querySelector<HTMLButtonElement>('.fold')
      const byQueue = wanted !== '' && !byName && matching.length > 0
      if (fold && byQueue && fold.getAttribute('aria-expanded') !== 'true') {
        folds.get(fold)!(true)
        fold.dataset.bySearch = ''
      } else if (fold && !byQueue && fold.dataset.bySearch !== undefined) {
        folds.get(fold)!(false)
        delete fold.dataset.bySearch
      }
      if (!box.hidden) shown++
    }
    if (wanted !== '') all.open = true
    found.textContent = wanted === '' ? '' : shown === 0 ? `No location or queue matches “${search.value.trim()}”.` : `${shown === 1 ? '1 location matches' : `${shown} locations match`} “${search.value.trim()}”.`
  })
  // Enter in the search field would submit the form (a preview): it only searches. Escape clears
  // a search, as in a browser's own search fields.
  search.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') event.preventDefault()
    if (event.key === 'Escape' && search.value !== '') {
      event.preventDefault()
      search.value = ''
      search.dispatchEvent(new Event('input'))
    }
  })
  return [tools, found, all]
}

/** The ticked queues: their ids, how many locations they are in, and whether they are all of the organisation's queues. */
export interface PlaceSelection {
  queueIds: string[]
  locationCount: number
  /** All queues ticked: the query then needs no queueId at all. */
  all: boolean
}

export function readPlaces(container: HTMLElement, locations: readonly Location[]): PlaceSelection {
  const queueIds = [...container.querySelectorAll<HTMLInputElement>('input[name="queueId"]:checked')].map((input) => input.value)
  const names = placeNames(locations)
  const locationIds = new Set(queueIds.map((id) => names.queues.get(id)?.locationId))
  return { queueIds, locationCount: locationIds.size, all: queueIds.length === names.queues.size }
}
