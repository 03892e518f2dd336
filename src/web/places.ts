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
}

/** Fills `container` with a box per location and its queues; `onChange` runs after every tick. */
export function renderPlaces(container: HTMLElement, locations: readonly Location[], onChange: () => void): void {
  container.replaceChildren()
  if (locations.length === 0) {
    container.append(Object.assign(document.createElement('p'), { className: 'hint', textContent: 'This organisation has no locations yet.' }))
    return
  }
  const names = placeNames(locations)
  for (const location of locations) {
    const box = document.createElement('div')
    box.className = 'location'
    const label = document.createElement('label')
    const input = checkbox({ value: location.id, disabled: location.queues.length === 0 })
    input.dataset.location = location.id
    // One text item beside the box, so that a long name wraps with its hint.
    const text = Object.assign(document.createElement('span'), { textContent: names.locations.get(location.id)! })
    if (location.queues.length === 0) text.append(Object.assign(document.createElement('span'), { className: 'hint', textContent: ' (no queues)' }))
    label.append(input, text)
    box.append(label)
    if (location.queues.length > 0) {
      const queues = document.createElement('div')
      queues.className = 'checks'
      queues.setAttribute('role', 'group')
      queues.setAttribute('aria-label', `Queues of ${names.locations.get(location.id)}`)
      for (const queue of location.queues) {
        const queueLabel = document.createElement('label')
        queueLabel.append(
          checkbox({ name: 'queueId', value: queue.id }),
          ` ${queue.name}${queue.status === 'ACTIVE' ? '' : ` (${queue.status.toLowerCase()})`}`,
        )
        queues.append(queueLabel)
      }
      box.append(queues)
    }
    container.append(box)
  }
  container.onchange = (event) => {
    const target = event.target as HTMLInputElement
    const box = target.closest('.location')!
    if (target.dataset.location) {
      for (const queue of box.querySelectorAll<HTMLInputElement>('input[name="queueId"]')) queue.checked = target.checked
    }
    syncLocation(box)
    onChange()
  }
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
