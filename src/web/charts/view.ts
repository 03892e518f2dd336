// The four charts, drawn with Observable Plot (SVG; see docs/decisions/0013-observable-plot.md),
// each followed by its numbers: a table behind "Show numbers" and a CSV download of the same
// rows. Loaded by the page only when the analyst asks for charts (/assets/charts-view.js).

import * as Plot from '@observablehq/plot'
import { TICKET_STATUSES } from '../../client/index.ts'
import { OUTCOMES, WEEKDAYS, type ChartNumbers } from './aggregate.ts'
import { numbersTables, tableCsv, type ChartId, type NumbersTable } from './tables.ts'

/** One colour per status, the same in every chart (Plot's default categorical scheme, by status). */
const STATUS_COLOURS: Record<string, string> = {
  WAITING: '#4e79a7', CALLED: '#f28e2c', COMPLETED: '#59a14f', CANCELED: '#e15759', SKIPPED: '#9c755f', NO_SHOW: '#b07aa1',
}

/** What each chart shows, said in words under its title (and read by a screen reader with the picture). */
const DESCRIPTIONS: Record<ChartId, string> = {
  'per-day': 'Tickets created each local day, stacked by their status now.',
  wait: 'Minutes from a ticket’s creation to its call, for the tickets that were called: the median (dark) and the 90th percentile (light) per queue.',
  arrivals: 'Tickets created in each local hour of each weekday; the darker, the more.',
  outcome: 'How the ended tickets of each queue ended, as shares of them (per cent); Total is the number of ended tickets.',
}

const EMPTY: Record<ChartId, string> = {
  'per-day': 'No tickets were created in this range: every day counts 0.',
  wait: 'No ticket in this range was called: there is no wait to show.',
  arrivals: 'No tickets were created in this range: every hour counts 0.',
  outcome: 'No ticket in this range has ended (completed, no-show, canceled or skipped).',
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, properties: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]) {
  const node = Object.assign(document.createElement(tag), properties)
  node.append(...children)
  return node
}

/** Room for the longest queue name at the left of a horizontal chart, within a phone's width. */
function labelMargin(names: string[], width: number): number {
  const longest = Math.max(0, ...names.map((name) => name.length))
  return Math.min(Math.round(width * 0.4), 20 + longest * 7)
}

function truncate(name: string, margin: number): string {
  const fits = Math.floor((margin - 20) / 7)
  return name.length <= fits ? name : `${name.slice(0, Math.max(1, fits - 1))}…`
}

function drawChart(id: ChartId, numbers: ChartNumbers, width: number): Element | null {
  const common = { width, style: { fontSize: '12px', overflow: 'visible' } }
  switch (id) {
    case 'per-day': {
      const data = numbers.days.flatMap(({ day, counts }) => TICKET_STATUSES.map((status, i) => ({ day, status, count: counts[i]! })))
      const every = Math.max(1, Math.ceil(numbers.days.length / Math.max(2, Math.floor(width / 70))))
      return Plot.plot({
        ...common,
        height: 260,
        marginBottom: 40,
        color: { domain: [...TICKET_STATUSES], range: TICKET_STATUSES.map((status) => STATUS_COLOURS[status]!), legend: true },
        x: { type: 'band', label: null, tickFormat: (day: string, i: number) => (i % every === 0 ? day.slice(5) : ''), tickRotate: 0 },
        y: { label: 'Tickets', grid: true },
        marks: [Plot.barY(data, { x: 'day', y: 'count', fill: 'status', title: (d: { day: string; status: string; count: number }) => `${d.day} ${d.status}: ${d.count}` }), Plot.ruleY([0])],
      })
    }
    case 'wait': {
      if (numbers.waits.length === 0) return null
      const margin = labelMargin(numbers.waits.map((row) => row.queue), width)
      const rows = numbers.waits.map((row) => ({ ...row, median: row.medianMs / 60_000, p90: row.p90Ms / 60_000 }))
      return Plot.plot({
        ...common,
        height: 40 + rows.length * 34,
        marginLeft: margin,
        x: { label: 'Minutes', grid: true },
        y: { label: null, domain: rows.map((row) => row.queue), tickFormat: (name: string) => truncate(name, margin) },
        marks: [
          Plot.barX(rows, { y: 'queue', x: 'p90', fill: '#9ecae9', title: (d: (typeof rows)[number]) => `${d.queue}: 90th percentile ${d.p90.toFixed(1)} min` }),
          Plot.barX(rows, { y: 'queue', x: 'median', fill: '#1f5f99', insetTop: 8, insetBottom: 8, title: (d: (typeof rows)[number]) => `${d.queue}: median ${d.median.toFixed(1)} min` }),
          Plot.ruleX([0]),
        ],
      })
    }
    case 'arrivals': {
      const data = numbers.arrivals.flatMap((hours, day) => hours.map((count, hour) => ({ weekday: WEEKDAYS[day]!, hour, count })))
      return Plot.plot({
        ...common,
        height: 230,
        marginLeft: 40,
        padding: 0.05,
        color: { scheme: 'blues', legend: true, label: 'Tickets created', zero: true },
        x: { label: 'Hour of day', domain: Array.from({ length: 24 }, (_, h) => h), tickFormat: (h: number) => (width < 500 && h % 3 !== 0 ? '' : String(h)) },
        y: { label: null, domain: [...WEEKDAYS] },
        marks: [Plot.cell(data, { x: 'hour', y: 'weekday', fill: 'count', title: (d: (typeof data)[number]) => `${d.weekday} ${d.hour}:00: ${d.count}` })],
      })
    }
    case 'outcome': {
      if (numbers.outcomes.length === 0) return null
      const margin = labelMargin(numbers.outcomes.map((row) => row.queue), width)
      const data = numbers.outcomes.flatMap(({ queue, counts }) => {
        const total = counts.reduce((a, b) => a + b, 0)
        return OUTCOMES.map((status, i) => ({ queue, status, share: (100 * counts[i]!) / total }))
      })
      return Plot.plot({
        ...common,
        height: 60 + numbers.outcomes.length * 30,
        marginLeft: margin,
        color: { domain: [...OUTCOMES], range: OUTCOMES.map((status) => STATUS_COLOURS[status]!), legend: true },
        x: { label: 'Share of ended tickets (%)', domain: [0, 100], grid: true },
        y: { label: null, domain: numbers.outcomes.map((row) => row.queue), tickFormat: (name: string) => truncate(name, margin) },
        marks: [Plot.barX(data, { y: 'queue', x: 'share', fill: 'status', title: (d: (typeof data)[number]) => `${d.queue} ${d.status}: ${d.share.toFixed(1)}%` })],
      })
    }
  }
}

/**
 * The chart as one image for assistive technology, named by its title and what it shows: its
 * numbers are in the table after it. Plot labels its marks' groups ("bar", "rule"), which ARIA
 * does not allow on an SVG group without a role; the picture has no parts worth reading alone.
 */
function asOneImage(chart: Element, label: string): HTMLElement {
  for (const node of [chart, ...chart.querySelectorAll('*')]) {
    for (const attribute of ['aria-label', 'aria-description', 'aria-hidden']) node.removeAttribute(attribute)
  }
  const image = element('div', { className: 'plot' }, chart)
  image.setAttribute('role', 'img')
  image.setAttribute('aria-label', label)
  return image
}

function numbersTable(table: NumbersTable): HTMLTableElement {
  const head = element('thead', {}, element('tr', {}, ...table.headers.map((header) => element('th', { scope: 'col' }, header))))
  const body = element('tbody', {}, ...table.rows.map(([first, ...rest]) => element('tr', {}, element('th', { scope: 'row' }, first!), ...rest.map((value) => element('td', {}, value)))))
  return element('table', { className: 'numbers' }, element('caption', {}, table.title), head, body)
}

/** Object URLs of the CSV downloads drawn last: freed when the charts are drawn again. */
let downloads: string[] = []

/**
 * Draws the charts of `numbers` into `container` (its earlier content replaced). `fileStem`
 * names the CSV downloads (`<chart>_<stem>.csv`).
 */
export function drawCharts(container: HTMLElement, numbers: ChartNumbers, fileStem: string): void {
  for (const url of downloads) URL.revokeObjectURL(url)
  downloads = []
  const width = Math.max(280, Math.floor(container.clientWidth))
  const figures = numbersTables(numbers).map((table) => {
    const headingId = `chart-${table.id}-title`
    const figure = element('section', { className: 'chart', id: `chart-${table.id}` })
    figure.setAttribute('aria-labelledby', headingId)
    figure.append(element('h3', { id: headingId }, table.title), element('p', { className: 'hint' }, DESCRIPTIONS[table.id]))
    const empty = numbers.tickets === 0 || table.rows.length === 0
    if (empty) figure.append(element('p', { className: 'empty' }, EMPTY[table.id]))
    const chart = drawChart(table.id, numbers, width)
    if (chart) figure.append(asOneImage(chart, `${table.title}: ${DESCRIPTIONS[table.id]} The numbers are in the table below.`))
    const url = URL.createObjectURL(new Blob([tableCsv(table)], { type: 'text/csv' }))
    downloads.push(url)
    // The table scrolls sideways inside its box on a phone, so the box takes the keyboard focus.
    const wrap = element('div', { className: 'table-wrap', tabIndex: 0 }, numbersTable(table))
    wrap.setAttribute('role', 'region')
    wrap.setAttribute('aria-label', `${table.title}, the numbers`)
    const disclosure = element('details', {}, element('summary', {}, 'Show numbers'), wrap)
    const link = element('a', { href: url, download: `${table.id}_${fileStem}.csv`, className: 'download-numbers' }, 'Download these numbers (CSV)')
    link.setAttribute('aria-describedby', headingId)
    figure.append(disclosure, element('p', {}, link))
    return figure
  })
  container.replaceChildren(...figures)
}
