// The preview table: the first rows as the file will hold them, with the queue's and the
// location's names where the file has their ids (the id stays visible under the name), and
// each time in the chosen zone with its offset (the file's UTC instant on hover).

import type { Ticket } from '../client/index.ts'
import type { PlaceNames } from './places.ts'
import { describeOffset, localTimestamp, type LocalClock } from './zone.ts'

const TIMES = ['createdAt', 'calledAt', 'completedAt', 'cancelledAt', 'skippedAt', 'noShowAt'] as const satisfies readonly (keyof Ticket)[]

function cell(text: string | null | undefined): HTMLTableCellElement {
  return Object.assign(document.createElement('td'), { textContent: text ?? '' })
}

/** A name with its id under it (and on hover); just the id when the page does not know the name. */
function namedCell(name: string | undefined, id: string): HTMLTableCellElement {
  const td = cell(name ?? id)
  if (name) {
    td.title = id
    td.append(Object.assign(document.createElement('span'), { className: 'id', textContent: id }))
  }
  return td
}

/** A time of the row in the clock's zone, with the offset it had then. */
function timeCell(instant: string | null, clock: LocalClock): HTMLTableCellElement {
  if (!instant) return cell('')
  const ms = Date.parse(instant)
  const td = cell(`${localTimestamp(ms, clock)} ${describeOffset(clock.offset(ms))}`)
  td.title = instant
  return td
}

/**
 * Fills `table` with `items` (tickets of /v1/tickets). `names` comes from placeNames(); `demo`
 * adds the `demo` column that a demo organisation's CSV carries (the JSON has no such field).
 */
export function renderPreview(table: HTMLTableElement, items: readonly Ticket[], { names, demo, clock }: { names: PlaceNames; demo: boolean; clock: LocalClock }): void {
  const columns = ['id', 'number', 'queue', 'location', 'status', ...TIMES.map((time) => `${time} (${clock.zone})`), 'calledByDeviceSessionId', ...(demo ? ['demo'] : [])]
  const head = document.createElement('thead')
  const headRow = document.createElement('tr')
  for (const column of columns) headRow.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: column }))
  head.append(headRow)
  const body = document.createElement('tbody')
  for (const item of items) {
    const row = document.createElement('tr')
    row.append(
      cell(item.id),
      cell(String(item.number)),
      namedCell(names.queues.get(item.queueId)?.name, item.queueId),
      namedCell(names.locations.get(item.locationId), item.locationId),
      cell(item.status),
      ...TIMES.map((time) => timeCell(item[time], clock)),
      cell(item.calledByDeviceSessionId),
    )
    if (demo) row.append(cell('1'))
    body.append(row)
  }
  table.replaceChildren(head, body)
}
