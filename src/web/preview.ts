// The preview table: the first rows as the file will hold them, with the queue's and the
// location's names where the file has their ids (the id stays visible under the name).

import type { Ticket } from '../client/index.ts'
import type { PlaceNames } from './places.ts'

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

/**
 * Fills `table` with `items` (tickets of /v1/tickets). `names` comes from placeNames(); `demo`
 * adds the `demo` column that a demo organisation's CSV carries (the JSON has no such field).
 */
export function renderPreview(table: HTMLTableElement, items: readonly Ticket[], { names, demo }: { names: PlaceNames; demo: boolean }): void {
  const columns = ['id', 'number', 'queue', 'location', 'status', ...TIMES, 'calledByDeviceSessionId', ...(demo ? ['demo'] : [])]
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
      ...TIMES.map((time) => cell(item[time])),
      cell(item.calledByDeviceSessionId),
    )
    if (demo) row.append(cell('1'))
    body.append(row)
  }
  table.replaceChildren(head, body)
}
