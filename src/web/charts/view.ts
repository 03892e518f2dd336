// The four charts, drawn with Observable Plot (SVG; see docs/decisions/0013-observable-plot.md),
// each followed by its numbers: a table behind "Show numbers" and a CSV download of the same
// rows. Loaded by the page only when the analyst asks for charts (/assets/charts-view.js).

import * as Plot from '@observablehq/plot'
import { TICKET_STATUSES, type TicketStatus } from '../../client/index.ts'
import { OUTCOMES, TOP_ROWS, WEEKDAYS, byLongestMedian, type ChartNumbers, type QueuePlace } from './aggregate.ts'
import { STATUS_COLOURS, fitLabel, fitMiddle, textWidth, tickStep, valueMargin } from './text-fit.ts'
import { UTF8_BOM } from '../csv-cells.ts'
import { rowsOf, workbookStream, type CellType } from '../xlsx/workbook.ts'
import { STATUS_WORDS, numbersTables, placeLabel, tableCsv, weeklyTable, type ChartId, type NumbersTable } from './tables.ts'

/** What each chart shows, said in words under its title (and read by a screen reader with the picture). */
const DESCRIPTIONS: Record<ChartId, string> = {
  'per-day': 'Tickets created each local day, stacked by their status now.',
  'per-week': 'Tickets created each local week (Monday to Sunday), stacked by their status now; the first and last week may hold fewer days of the range.',
  'per-location': 'Tickets created at each location, stacked by their status now.',
  service: 'Minutes from a ticket’s call to its completion, for the completed tickets: the median (dark) and the 90th percentile (light) per location, every queue’s tickets together.',
  'service-queue': '',
  target: 'Of the called tickets, the share called within the target wait set above the buttons, per location.',
  'target-queue': '',
  wait: 'Minutes from a ticket’s creation to its call, for the tickets that were called: the median (dark) and the 90th percentile (light) per queue of each location.',
  arrivals: 'Tickets created in each local hour of each weekday; the further from the background colour, the more. Under it, every day of the range together, per hour.',
  outcome: 'How the ended tickets of each queue of each location ended, as shares of them (per cent); Total is the number of ended tickets.',
}

// "Of the selection": a status filter or ticked queues may leave none where tickets were created.
const EMPTY: Record<ChartId, string> = {
  'per-day': 'No ticket of the selection was created in this range: every day counts 0.',
  'per-week': 'No ticket of the selection was created in this range: every week counts 0.',
  'per-location': 'No ticket of the selection was created in this range, at any location.',
  service: 'No ticket in this range was completed after a call: there is no service time to show.',
  'service-queue': '',
  target: 'No called ticket in this range: no share within the target to show.',
  'target-queue': '',
  wait: 'No ticket in this range was called: there is no wait to show.',
  arrivals: 'No ticket of the selection was created in this range: every hour counts 0.',
  outcome: 'No ticket in this range has ended (completed, no-show, canceled or skipped).',
}

/** Room under a horizontal axis for its tick labels and, below them, its title (never beside the ticks). */
const X_AXIS = { marginBottom: 46, labelAnchor: 'center', labelOffset: 40 } as const
/** Room above a vertical axis for its title, clear of the top tick label. */
const MARGIN_TOP = 32
const FONT = { fontSize: '12px', overflow: 'visible' }
/** A count as the tables write it and valueMargin measures it: 14,000. */
const grouped = (value: number) => value.toLocaleString('en-US')

function element<K extends keyof HTMLElementTagNameMap>(tag: K, properties: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]) {
  const node = Object.assign(document.createElement(tag), properties)
  node.append(...children)
  return node
}

/** Today, when the range holds it: its day and the local time its counts reach. */
export interface PartialDay {
  day: string
  /** The chosen zone's clock time now; null in each location's own days, where there is no one. */
  until: string | null
}

/** The second line of the partial day's tick label. */
const PARTIAL_TICK = 'so far'

/** Bars stacked by status per day or per week: `rows` are [label, ...counts per status]; the `partial` one is drawn lighter. */
function statusBars(rows: { label: string; counts: number[] }[], width: number, tickLabel: (label: string) => string, partial: string | null = null): Element {
  // No bar where a count is 0 (an empty stack would otherwise straddle the axis).
  const data = rows.flatMap(({ label, counts }) => TICKET_STATUSES.map((status, i) => ({ label, status: STATUS_WORDS[status], count: counts[i]! }))).filter((d) => d.count > 0)
  const highest = Math.max(0, ...rows.map(({ counts }) => counts.reduce((a, b) => a + b, 0)))
  const key = statusKey(TICKET_STATUSES, rows)
  const marginLeft = valueMargin(highest)
  const plotWidth = width - marginLeft - 20
  const every = tickStep(rows.length, plotWidth, textWidth('00-00') + 10)
  // The partial day's (or week's) tick is always written, on two lines, "so far" under its date:
  // the lighter bar is then not told by its colour alone. Ticks too near it to be read are left out.
  const last = rows.findIndex((row) => row.label === partial)
  const near = last < 0 ? 0 : Math.ceil((textWidth('00-00') / 2 + textWidth(PARTIAL_TICK) / 2 + 10) / (plotWidth / rows.length))
  const tick = (label: string, i: number) => (i === last ? `${tickLabel(label)}\n${PARTIAL_TICK}` : i % every === 0 && (last < 0 || Math.abs(last - i) >= near) ? tickLabel(label) : '')
  const plot = Plot.plot({
    width,
    style: FONT,
    height: last < 0 ? 280 : 294,
    marginLeft,
    marginTop: MARGIN_TOP,
    marginBottom: last < 0 ? 30 : 44,
    color: key.color,
    x: { type: 'band', label: null, domain: rows.map((row) => row.label), tickFormat: tick, tickRotate: 0 },
    y: { label: '↑ Tickets', grid: true, tickFormat: grouped, ...emptyAxis(highest) },
    marks: [
      Plot.barY(data, {
        className: 'bars', x: 'label', y: 'count', fill: 'status',
        fillOpacity: (d: (typeof data)[number]) => (d.label === partial ? 0.45 : 1),
        title: (d: (typeof data)[number]) => `${d.label}${d.label === partial ? ' (today, so far)' : ''} ${d.status}: ${d.count.toLocaleString('en-US')}`,
      }),
      Plot.ruleY([0]),
    ],
  })
  return key.said(plot)
}

/**
 * A colour key of the statuses (of `statuses`, in `rows`' counts) that have tickets; the others
 * are named below the chart as having none, since a swatch would say they are drawn. With no
 * tickets at all there is no swatch: the key says so in words, where it would be.
 */
function statusKey(statuses: readonly TicketStatus[], rows: readonly { counts: readonly number[] }[]): { color: Plot.ScaleOptions; said(chart: Element): Element } {
  const present = statuses.filter((_, i) => rows.some(({ counts }) => counts[i]! > 0))
  const none = statuses.filter((status) => !present.includes(status)).map((status) => STATUS_WORDS[status])
  const line = (text: string) => element('p', { className: 'legend-empty' }, text)
  return {
    color: { domain: present.map((status) => STATUS_WORDS[status]), range: present.map((status) => STATUS_COLOURS[status]), legend: present.length > 0 },
    said: (chart) => (present.length === 0 ? element('div', {}, line('Tickets by status: no tickets'), chart) : none.length === 0 ? chart : element('div', {}, chart, line(`No tickets in this selection: ${none.join(', ')}.`))),
  }
}

/**
 * A count axis: whole numbers only (a few tickets would otherwise get ticks at 0.5), and one whose
 * values are all 0 still runs from 0 to 1 (Plot's own would be 0 to 0, drawn mid-height).
 */
function emptyAxis(highest: number): { domain?: [number, number]; ticks?: number[] } {
  if (highest === 0) return { domain: [0, 1], ticks: [0, 1] }
  return highest < 8 ? { ticks: Array.from({ length: highest + 1 }, (_, i) => i) } : {}
}

/**
 * Horizontal bars per queue of a location: "Location · Queue" beside each row when every label
 * fits the margin (at most 42 % of the width), else two lines, the location above its queue, each
 * cut with "…" to the same room, so that a location reads the same on every row and keeps as
 * many letters as the margin holds (the table has both names whole). A location's name is cut in
 * its middle, keeping its end: "Sydney Circ…Quay 1" and "…Quay 2" stay apart. Rows are keyed by queue id.
 */
function queueLabels(rows: readonly QueuePlace[], width: number): { marginLeft: number; rowHeight: number; tickFormat: (index: number) => string } {
  const widest = Math.round(width * 0.42) - 16
  const oneLine = Math.ceil(Math.max(0, ...rows.map((row) => textWidth(placeLabel(row)))))
  if (oneLine <= widest) return { marginLeft: oneLine + 16, rowHeight: 0, tickFormat: (index: number) => placeLabel(rows[index]!) }
  const room = Math.min(widest, Math.ceil(Math.max(...rows.flatMap((row) => [textWidth(row.location), textWidth(row.queue)]))))
  const tickFormat = (index: number) => {
    const { location, queue } = rows[index]!
    return location && queue ? `${fitMiddle(location, room)}\n${fitLabel(queue, room)}` : fitMiddle(location || queue, room)
  }
  // Two lines of 12px text need a taller row than one.
  return { marginLeft: room + 16, rowHeight: 40, tickFormat }
}

/** Which rows a chart of many draws: the first TOP_ROWS in its order and the rest as one, or all. */
export interface RowsShown {
  all: boolean
}

/**
 * Horizontal bars, one row per queue (or location), in the order given; with more rows than fit
 * a screen the value axis is drawn at the top as well as the bottom. Every row's label carries its
 * full name as a tooltip (<title>), the cut ones included.
 */
function rowsPlot(rows: readonly (QueuePlace & { label: string })[], width: number, rowMin: number, tickRoom: number, x: Plot.ScaleOptions, marks: Plot.Markish[], color?: Plot.ScaleOptions, marginRight = 24): Element {
  const { marginLeft, rowHeight, tickFormat } = queueLabels(rows, width)
  const tall = rows.length > TOP_ROWS + 1
  const chart = Plot.plot({
    width,
    style: FONT,
    height: X_AXIS.marginBottom * (tall ? 2 : 1) + 10 + rows.length * Math.max(rowMin, rowHeight),
    marginLeft,
    marginRight,
    marginTop: tall ? X_AXIS.marginBottom : 10,
    marginBottom: X_AXIS.marginBottom,
    ...(color ? { color } : {}),
    x: { grid: true, labelAnchor: X_AXIS.labelAnchor, labelOffset: X_AXIS.labelOffset, ticks: Math.max(2, Math.floor((width - marginLeft) / tickRoom)), ...x, ...(tall ? { axis: 'both' } : {}) },
    y: { label: null, domain: rows.map((_, index) => index), tickFormat },
    marks,
  })
  const svg = chart.tagName.toLowerCase() === 'svg' ? chart : chart.querySelector('svg:not([class$="-swatch"] svg)')
  const ticks = svg?.querySelectorAll('g[aria-label="y-axis tick label"] > text') ?? []
  ticks.forEach((text, index) => {
    const row = rows[index]
    if (row) text.append(Object.assign(document.createElementNS('http://www.w3.org/2000/svg', 'title'), { textContent: row.label }))
  })
  return chart
}

/** The first TOP_ROWS rows and, unless all are asked for, one row for the rest made by `rest`. */
function topRows<T>(rows: T[], shown: RowsShown, rest: (others: T[]) => T): T[] {
  if (shown.all || rows.length <= TOP_ROWS + 1) return rows
  return [...rows.slice(0, TOP_ROWS), rest(rows.slice(TOP_ROWS))]
}

const total = (counts: readonly number[]) => counts.reduce((a, b) => a + b, 0)
const byTotal = <T extends QueuePlace & { counts: number[] }>(a: T, b: T) => total(b.counts) - total(a.counts) || a.location.localeCompare(b.location) || a.queue.localeCompare(b.queue)
const others = (count: number, what: string) => ({ location: '', queue: `Other ${count} ${what}` })
const summed = (rows: { counts: number[] }[]) => rows[0]!.counts.map((_, i) => total(rows.map((row) => row.counts[i]!)))

/** Median (dark) inside the 90th percentile (light) per row, in minutes: waits and service times. */
function medianChart(places: (QueuePlace & { medianMs: number; p90Ms: number })[], width: number): Element {
  const rows = places.map((row, index) => ({ ...row, index, label: placeLabel(row), median: row.medianMs / 60_000, p90: row.p90Ms / 60_000 }))
  return rowsPlot(rows, width, 34, 60, { label: 'Minutes' }, [
    Plot.barX(rows, { className: 'bars', y: 'index', x: 'p90', fill: '#56b4e9', title: (d: (typeof rows)[number]) => `${d.label}: 90th percentile ${d.p90.toFixed(1)} min` }),
    Plot.barX(rows, { className: 'bars', y: 'index', x: 'median', fill: '#0072b2', insetTop: 8, insetBottom: 8, title: (d: (typeof rows)[number]) => `${d.label}: median ${d.median.toFixed(1)} min` }),
    Plot.ruleX([0]),
  ])
}

const share = (row: { called: number; within: number }) => (100 * row.within) / row.called

/**
 * The two charts of one row per location (service time, share called within the target), by the
 * rule of every chart of many rows: sorted by value, 12 rows and the rest as one (service times
 * pooled, shares of the rest's tickets together) until all are asked for.
 */
function locationRows(id: 'service' | 'target', numbers: ChartNumbers, width: number, shown: RowsShown): Element | null {
  if (id === 'service') {
    const other = numbers.service.other
    if (numbers.service.locations.length === 0) return null
    return medianChart(topRows([...numbers.service.locations].sort(byLongestMedian), shown, () => ({ ...others(other!.locations, 'locations'), ...other! })), width)
  }
  const { minutes, locations } = numbers.target
  if (locations.length === 0) return null
  const lowest = [...locations].sort((a, b) => share(a) - share(b) || a.location.localeCompare(b.location))
  const places = topRows(lowest, shown, (rest) => ({ ...others(rest.length, 'locations'), called: total(rest.map((row) => row.called)), within: total(rest.map((row) => row.within)) }))
  const rows = places.map((row, index) => ({ ...row, index, label: placeLabel(row), share: share(row) }))
  return rowsPlot(rows, width, 30, 50, { label: `Share called within ${minutes} min (%)`, domain: [0, 100] }, [
    Plot.barX(rows, { className: 'bars', y: 'index', x: 'share', fill: '#009e73', title: (d: (typeof rows)[number]) => `${d.label}: ${d.share.toFixed(1)}% of ${d.called.toLocaleString('en-US')} within ${minutes} min` }),
    Plot.ruleX([0]),
  ])
}

/** Tickets by location, the most first: the first TOP_ROWS and the rest summed, unless all are shown. */
function locationTotals(numbers: ChartNumbers, shown: RowsShown) {
  return topRows(numbers.locations.map(({ location, counts }) => ({ location: '', queue: location, counts })).sort(byTotal), shown, (rest) => ({ ...others(rest.length, 'locations'), counts: summed(rest) }))
}

/** When the rest's sum outgrows every named location: the named rows' longest bar and the rest's total. */
function cutOther(places: { counts: number[] }[], numbers: ChartNumbers, shown: RowsShown): { named: number; other: number } | null {
  if (places.length === numbers.locations.length || shown.all) return null
  const named = Math.max(...places.slice(0, -1).map((place) => total(place.counts)))
  const other = total(places.at(-1)!.counts)
  return other > named ? { named, other } : null
}

/** The charts of many rows, and what their rows are. */
const MANY_ROWS: Partial<Record<ChartId, 'queues' | 'locations'>> = { wait: 'queues', outcome: 'queues', 'per-location': 'locations', service: 'locations', target: 'locations' }

/** The sentence that says in which order a chart of many rows draws them, and how many. */
export function orderSaid(id: ChartId, numbers: ChartNumbers, shown: RowsShown): string | null {
  const counts: Partial<Record<ChartId, number>> = { wait: numbers.waits.length, outcome: numbers.outcomes.length, 'per-location': numbers.locations.length, service: numbers.service.locations.length, target: numbers.target.locations.length }
  const count = counts[id] ?? 0
  if (count < 2) return null
  const order = { wait: 'Longest median wait first', outcome: 'Most ended tickets first', 'per-location': 'Most tickets first', service: 'Longest median service first', target: 'Lowest share first' }[id as 'wait']
  const what = MANY_ROWS[id]!
  // Service time and share within target have a table per location and one per queue.
  const tables = id === 'service' || id === 'target' ? (all: string) => `The tables list them${all} by name, per location and per queue.` : (all: string) => `The table lists them${all} by name.`
  if (shown.all || count <= TOP_ROWS + 1) return `${order}; all ${count} ${what}. ${tables('')}`
  const cut = id === 'per-location' && cutOther(locationTotals(numbers, shown), numbers, shown) ? ' Its bar is cut at the longest of the others, its total written beside it.' : ''
  return `${order}; the first ${TOP_ROWS} of ${count} ${what}, the other ${count - TOP_ROWS} together as one bar.${cut} ${tables(' all')}`
}

function drawChart(id: ChartId, numbers: ChartNumbers, width: number, partial: PartialDay | null, shown: RowsShown = { all: false }): Element | null {
  switch (id) {
    case 'per-day':
      return statusBars(numbers.days.map(({ day, counts }) => ({ label: day, counts })), width, (day) => day.slice(5), partial?.day ?? null)
    case 'per-week': {
      const weeks = weeklyTable(numbers).rows
      // The week holding today is the last one and is partial too.
      const partialWeek = partial ? (weeks.at(-1)?.[0] ?? null) : null
      return statusBars(weeks.map(([monday, , ...counts]) => ({ label: monday!, counts: counts.slice(0, -1).map(Number) })), width, (day) => day.slice(5), partialWeek)
    }
    case 'per-location': {
      if (numbers.locations.length === 0) return null
      const places = locationTotals(numbers, shown)
      const rows = places.map((place) => ({ ...place, label: place.queue }))
      const data = rows.flatMap((row, index) => TICKET_STATUSES.map((status, i) => ({ index, label: row.label, status: STATUS_WORDS[status], count: row.counts[i]! })).filter((d) => d.count > 0))
      // The rest summed would set the scale and flatten the named rows: its bar is cut at theirs, its total written beside it.
      const cut = cutOther(places, numbers, shown)
      const written = cut ? `${grouped(cut.other)} ›` : ''
      const key = statusKey(TICKET_STATUSES, rows)
      return key.said(rowsPlot(rows, width, 30, 70, { label: 'Tickets', tickFormat: grouped, ...(cut ? { domain: [0, cut.named] } : {}) }, [
        Plot.barX(data, { className: 'bars', y: 'index', x: 'count', fill: 'status', clip: true, title: (d: (typeof data)[number]) => `${d.label} ${d.status}: ${d.count.toLocaleString('en-US')}` }),
        Plot.ruleX([0]),
        ...(cut ? [Plot.text([written], { className: 'cut-total', x: () => cut.named, y: () => rows.length - 1, text: (d: string) => d, textAnchor: 'start', dx: 4, fill: 'currentColor' })] : []),
        // The last tick label (100,000) is centred on the axis's end: half of it beyond.
      ], key.color, Math.max(24, Math.ceil(valueMargin(Math.max(...rows.map((row) => total(row.counts)))) / 2), cut ? Math.ceil(textWidth(written)) + 10 : 0)))
    }
    case 'wait': {
      if (numbers.waits.length === 0) return null
      const other = numbers.otherWaits
      const places = topRows([...numbers.waits].sort(byLongestMedian), shown, () => ({ ...others(other!.queues, 'queues'), ...other! }))
      return medianChart(places, width)
    }
    case 'service':
    case 'target':
      return locationRows(id, numbers, width, shown)
    case 'service-queue':
    case 'target-queue':
      return null
    case 'arrivals':
      return arrivalsCharts(numbers, width)
    case 'outcome': {
      if (numbers.outcomes.length === 0) return null
      const places = topRows([...numbers.outcomes].sort(byTotal), shown, (rest) => ({ ...others(rest.length, 'queues'), counts: summed(rest) }))
      const rows = places.map((place) => ({ ...place, label: placeLabel(place) }))
      const data = rows.flatMap((place, index) => OUTCOMES.map((status, i) => ({ index, label: place.label, status: STATUS_WORDS[status], share: (100 * place.counts[i]!) / total(place.counts) }))).filter((d) => d.share > 0)
      const key = statusKey(OUTCOMES, rows)
      return key.said(rowsPlot(rows, width, 30, 50, { label: 'Share of ended tickets (%)', domain: [0, 100] }, [
        Plot.barX(data, { className: 'bars', y: 'index', x: 'share', fill: 'status', title: (d: (typeof data)[number]) => `${d.label} ${d.status}: ${d.share.toFixed(1)}%` }),
      ], key.color))
    }
  }
}

/** The brightest colour of the dark theme's heat map: the busiest hour stands out most from the dark page. */
const DARK_BUSIEST = '#d4e9ff'

/**
 * The heat map's colours: light, from near-white (none) to dark blue (the busiest); dark, from
 * the panel's own colour (none) to the brightest (the busiest), so emphasis is never reversed.
 */
function heatColours(): Plot.ScaleOptions {
  if (!matchMedia('(prefers-color-scheme: dark)').matches) return { scheme: 'blues' }
  const panel = getComputedStyle(document.documentElement).getPropertyValue('--panel').trim() || '#1e232b'
  return { range: [panel, DARK_BUSIEST], interpolate: 'lab' }
}

/** The weekday × hour heat map, and under it the hours' totals over every day, on the same hours. */
function arrivalsCharts(numbers: ChartNumbers, width: number): Element {
  const totals = Array.from({ length: 24 }, (_, hour) => ({ hour, count: numbers.arrivals.reduce((sum, hours) => sum + hours[hour]!, 0) }))
  const highest = Math.max(0, ...totals.map((total) => total.count))
  // An empty hour is drawn in the ramp's 0 (the panel's colour in the dark); with no tickets at
  // all there is no ramp, so no cell (Plot would paint a 0-to-0 ramp's middle).
  const data = highest === 0 ? [] : numbers.arrivals.flatMap((hours, day) => hours.map((count, hour) => ({ weekday: WEEKDAYS[day]!, hour, count })))
  // The weekdays' names and the totals' tick labels share the left margin: room for the wider.
  const marginLeft = Math.max(valueMargin(highest), Math.ceil(textWidth('Wed') + 14))
  const every = tickStep(24, width - marginLeft - 20, textWidth('00') + 8)
  const hours = { domain: Array.from({ length: 24 }, (_, h) => h), tickFormat: (h: number) => (h % every === 0 ? String(h) : '') }
  // The legend's ticks are counts: with a few tickets per hour, whole numbers only (d3 would pick 0.5 steps).
  const busiest = Math.max(0, ...numbers.arrivals.flat())
  const rampTicks = busiest > 0 && busiest < 10 ? Array.from({ length: Math.floor(busiest / Math.ceil(busiest / 5)) + 1 }, (_, i) => i * Math.ceil(busiest / 5)) : undefined
  const heat = Plot.plot({
    width,
    style: FONT,
    height: 250,
    marginLeft,
    marginTop: 10,
    marginBottom: X_AXIS.marginBottom,
    padding: 0.05,
    // The ramp legend's own margins (Plot reads them from the scale's options): its first and last tick labels whole.
    color: { ...heatColours(), legend: highest > 0, label: 'Tickets created', zero: true, tickFormat: grouped, ...(rampTicks ? { ticks: rampTicks } : {}), ...({ marginLeft: 14, marginRight: 24, width: Math.min(320, width) } as Plot.ScaleOptions) },
    x: { ...hours, label: 'Hour of day', labelAnchor: X_AXIS.labelAnchor, labelOffset: X_AXIS.labelOffset },
    y: { label: null, domain: [...WEEKDAYS] },
    marks: [Plot.cell(data, { className: 'cells', x: 'hour', y: 'weekday', fill: 'count', title: (d: (typeof data)[number]) => `${d.weekday} ${d.hour}:00: ${d.count}` })],
  })
  const total = Plot.plot({
    width,
    style: FONT,
    height: 170,
    marginLeft,
    marginTop: MARGIN_TOP,
    marginBottom: X_AXIS.marginBottom,
    x: { ...hours, type: 'band', label: 'Hour of day, all days', labelAnchor: X_AXIS.labelAnchor, labelOffset: X_AXIS.labelOffset },
    y: { label: '↑ Tickets', grid: true, tickFormat: grouped, ticks: 4, ...emptyAxis(highest > 4 ? 8 : highest) },
    marks: [Plot.barY(totals.filter((total) => total.count > 0), { className: 'bars', x: 'hour', y: 'count', fill: '#0072b2', title: (d: (typeof totals)[number]) => `${d.hour}:00, all days: ${d.count}` }), Plot.ruleY([0])],
  })
  // A ramp from 0 to 0 would say nothing: in words instead.
  if (highest === 0) return element('div', {}, element('p', { className: 'legend-empty' }, 'Tickets created: no tickets'), heat, total)
  return element('div', {}, heat, total)
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
  // What the picture says in words ("No tickets in this selection: …") is inside the image, so
  // hidden from assistive technology: it goes into the label.
  const said = [...chart.querySelectorAll('.legend-empty')].map((line) => line.textContent).join(' ')
  image.setAttribute('aria-label', said ? `${label} ${said}` : label)
  return image
}

/** A column of names (Location, Queue), not of numbers: left-aligned, numbers right-aligned. */
const NUMBER = /^-?[\d,]+(\.\d+)?$/
function textColumns(table: NumbersTable): boolean[] {
  return table.headers.map((_, i) => table.rows.some((row) => !NUMBER.test(row[i]!)))
}

function numbersTable(table: NumbersTable): HTMLTableElement {
  const text = textColumns(table)
  const cell = (tag: 'th' | 'td', value: string, i: number, scope?: string) => {
    const node = element(tag, { className: text[i] ? 'text' : 'number' }, value)
    if (scope) node.setAttribute('scope', scope)
    return node
  }
  const head = element('thead', {}, element('tr', {}, ...table.headers.map((header, i) => cell('th', header, i, 'col'))))
  const head0 = (first: string, index: number) => {
    const th = cell('th', first, 0, 'row')
    const note = table.rowNotes?.get(index)
    if (note) th.append(element('span', { className: 'note' }, ` (${note})`))
    return th
  }
  const body = element('tbody', {}, ...table.rows.map(([first, ...rest], index) => element('tr', {}, head0(first!, index), ...rest.map((value, i) => cell('td', value, i + 1)))))
  return element('table', { className: 'numbers' }, element('caption', {}, table.title), head, body)
}

/** The CSV downloads' object URLs of one drawing of the charts, freed when they are drawn again. */
export class NumbersFiles {
  private urls: string[] = []

  link(table: NumbersTable, fileStem: string, describedBy: string): HTMLAnchorElement {
    const url = URL.createObjectURL(new Blob([UTF8_BOM, tableCsv(table)], { type: 'text/csv' }))
    this.urls.push(url)
    const link = element('a', { href: url, download: `${table.id}_${fileStem}.csv`, className: 'download-numbers' }, 'Download these numbers (CSV)')
    link.setAttribute('aria-describedby', describedBy)
    return link
  }

  /** A button that saves the table as an .xlsx (made when pressed: a table is small). */
  workbookButton(table: NumbersTable, fileStem: string, describedBy: string): HTMLButtonElement {
    const button = element('button', { type: 'button', className: 'secondary download-numbers-xlsx' }, 'Download these numbers (.xlsx)')
    button.setAttribute('aria-describedby', describedBy)
    const text = textColumns(table)
    const types: CellType[] = table.headers.map((header, i) => (/^(Day|Week)/.test(header) ? 'date' : text[i] ? 'text' : 'number'))
    button.addEventListener('click', async () => {
      const blob = await new Response(workbookStream(table.title, table.headers, types, rowsOf(table.rows))).blob()
      const url = URL.createObjectURL(blob)
      const link = element('a', { href: url, download: `${table.id}_${fileStem}.xlsx` })
      document.body.append(link)
      link.click()
      link.remove()
      setTimeout(() => URL.revokeObjectURL(url), 60_000)
    })
    return button
  }

  free(): void {
    for (const url of this.urls.splice(0)) URL.revokeObjectURL(url)
  }
}

/** The picture, its table and its CSV link of one chart (`table.id` says which). */
/** Whether the charts on show count each location in its own days and hours (set by drawCharts). */
let eachOwn = false
const EACH_OWN = "Each location's tickets in its own local days and hours, summed: 09:00 is 09:00 wherever the location is."

function chartParts(table: NumbersTable, numbers: ChartNumbers, width: number, headingId: string, files: NumbersFiles, fileStem: string, partial: PartialDay | null): (Node | string)[] {
  const parts: (Node | string)[] = [element('p', { className: 'hint' }, DESCRIPTIONS[table.id])]
  if (eachOwn && (table.id === 'per-day' || table.id === 'per-week' || table.id === 'arrivals')) parts.push(element('p', { className: 'hint each-own' }, EACH_OWN))
  if (numbers.tickets === 0 || table.rows.length === 0) parts.push(element('p', { className: 'empty' }, EMPTY[table.id]))
  if (partial && (table.id === 'per-day' || table.id === 'per-week')) {
    const last = table.rows.length - 1
    const what = table.id === 'per-day' ? `${partial.day} is today and is not over` : 'The last week holds today, which is not over'
    // In each location's own days, "today" ends at a different instant in each zone: no one clock time.
    const sofar = partial.until === null ? "each location's tickets so far" : `the tickets until ${partial.until}`
    parts.push(element('p', { className: 'partial' }, `${what}: its bar (drawn lighter, “${PARTIAL_TICK}” under its date) counts ${sofar}, not a whole ${table.id === 'per-day' ? 'day' : 'week'}.`))
    table.rowNotes = new Map([[last, table.id === 'per-day' ? 'today, so far' : 'holds today, so far']])
  }
  const shown: RowsShown = { all: false }
  const picture = element('div')
  const drawPicture = () => {
    const chart = drawChart(table.id, numbers, width, partial, shown)
    picture.replaceChildren(...(chart ? [asOneImage(chart, `${table.title}: ${DESCRIPTIONS[table.id]} The numbers are in the table below.`)] : []))
    order.textContent = orderSaid(table.id, numbers, shown) ?? ''
  }
  const order = element('p', { className: 'hint order' })
  drawPicture()
  if (order.textContent) parts.push(order)
  parts.push(picture)
  const rowCount = table.id === 'per-location' ? numbers.locations.length : table.rows.length
  const what = MANY_ROWS[table.id]
  if (what && rowCount > TOP_ROWS + 1) {
    // Redraws the picture only: the button keeps the focus, and says what the next press does.
    const toggle = element('button', { type: 'button', className: 'secondary show-all' }, `Show all ${rowCount} ${what}`)
    toggle.setAttribute('aria-describedby', headingId)
    toggle.addEventListener('click', () => {
      shown.all = !shown.all
      toggle.textContent = shown.all ? `Show the first ${TOP_ROWS} only` : `Show all ${rowCount} ${what}`
      drawPicture()
    })
    parts.push(element('p', {}, toggle))
  }
  // The table scrolls sideways inside its box on a phone, so the box takes the keyboard focus.
  const captioned = eachOwn && (table.id === 'per-day' || table.id === 'per-week' || table.id === 'arrivals') ? { ...table, title: `${table.title} (each location in its own time)` } : table
  const wrap = element('div', { className: 'table-wrap', tabIndex: 0 }, numbersTable(captioned))
  wrap.setAttribute('role', 'region')
  wrap.setAttribute('aria-label', `${table.title}, the numbers`)
  parts.push(element('details', {}, element('summary', {}, 'Show numbers'), wrap), element('p', { className: 'numbers-files' }, files.link(table, fileStem, headingId), ' ', files.workbookButton(table, fileStem, headingId)))
  if (table.perQueue) {
    const queues = element('div', { className: 'table-wrap', tabIndex: 0 }, numbersTable(table.perQueue))
    queues.setAttribute('role', 'region')
    queues.setAttribute('aria-label', `${table.perQueue.title}, the numbers`)
    const link = files.link(table.perQueue, fileStem, headingId)
    link.textContent = 'Download the numbers per queue (CSV)'
    const workbook = files.workbookButton(table.perQueue, fileStem, headingId)
    workbook.textContent = 'Download the numbers per queue (.xlsx)'
    parts.push(element('details', {}, element('summary', {}, 'Show numbers per queue'), queues), element('p', { className: 'numbers-files' }, link, ' ', workbook))
  }
  return parts
}

/** "Per day" and "Per week" for the first chart: picking one redraws the chart, its table and its file. */
function periodChoice(onPick: (weekly: boolean) => void): HTMLFieldSetElement {
  const choice = (value: string, text: string, checked: boolean): HTMLLabelElement => {
    const input = Object.assign(document.createElement('input'), { type: 'radio', name: 'period', value, checked })
    input.addEventListener('change', () => onPick(value === 'week'))
    const label = document.createElement('label')
    label.append(input, text)
    return label
  }
  const fieldset = Object.assign(document.createElement('fieldset'), { className: 'period' })
  fieldset.append(Object.assign(document.createElement('legend'), { textContent: 'Count tickets' }), choice('day', 'Per day', true), choice('week', 'Per week', false))
  return fieldset
}

/**
 * Draws the charts of `numbers` into `container` (its earlier content replaced). `fileStem`
 * names the CSV downloads (`<chart>_<stem>.csv`); `files` holds their URLs.
 */
export function drawCharts(container: HTMLElement, numbers: ChartNumbers, fileStem: string, files: NumbersFiles, partial: PartialDay | null = null, perLocation = false): void {
  eachOwn = perLocation
  files.free()
  const width = Math.max(260, Math.floor(container.clientWidth))
  const figures = numbersTables(numbers).map((table) => {
    const headingId = `chart-${table.id}-title`
    const figure = element('section', { className: 'chart', id: `chart-${table.id}` })
    figure.setAttribute('aria-labelledby', headingId)
    const heading = element('h3', { id: headingId }, table.title)
    const body = element('div', {}, ...chartParts(table, numbers, width, headingId, files, fileStem, partial))
    if (table.id !== 'per-day') {
      figure.append(heading, body)
      return figure
    }
    const weekly = weeklyTable(numbers)
    figure.append(heading, periodChoice((perWeek) => {
      const shown = perWeek ? weekly : table
      heading.textContent = shown.title
      body.replaceChildren(...chartParts(shown, numbers, width, headingId, files, fileStem, partial))
    }), body)
    return figure
  })
  container.replaceChildren(...figures)
}
