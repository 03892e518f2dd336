// Room for the charts' text: widths measured in the charts' own font, so that a tick label, an
// axis title or a name is never cut by the edge of its chart nor drawn over another, whatever
// the counts (14,000 a day) or the names (a long location and queue) and whatever the width.

import type { TicketStatus } from '../../client/index.ts'

/**
 * One colour per status, the same in every chart: Okabe and Ito's palette, told apart by readers
 * with any common colour-vision deficiency (and apart in lightness where hues meet).
 */
export const STATUS_COLOURS: Record<TicketStatus, string> = {
  WAITING: '#56b4e9', CALLED: '#f0e442', COMPLETED: '#0072b2', CANCELED: '#d55e00', SKIPPED: '#e69f00', NO_SHOW: '#cc79a7',
}

/** Plot's font at the size the charts set (view.ts): what the SVG text is drawn in. */
const CHART_FONT = '12px system-ui, sans-serif'
/** Measured widths differ a little from the SVG's own layout (hinting, fallback fonts): keep this much more room. */
const SLACK = 1.1

let context: CanvasRenderingContext2D | null = null

/** The width in CSS pixels of `text` drawn in the charts' font. */
export function textWidth(text: string): number {
  context ??= document.createElement('canvas').getContext('2d')!
  context.font = CHART_FONT
  return context.measureText(text).width * SLACK
}

/** `text` as it is when it fits in `room` pixels, else cut and ended with "…". */
export function fitLabel(text: string, room: number): string {
  if (textWidth(text) <= room) return text
  let low = 0
  let high = text.length
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (textWidth(`${text.slice(0, middle)}…`) <= room) low = middle
    else high = middle - 1
  }
  return `${text.slice(0, Math.max(1, low))}…`
}

/**
 * `text` as it is when it fits in `room` pixels, else its start and its end with "…" between:
 * "Sydney Circ…Quay 1" and "Sydney Circ…Quay 2" stay two places where an end cut gives one.
 */
export function fitMiddle(text: string, room: number): string {
  if (textWidth(text) <= room) return text
  const cut = (kept: number) => {
    const head = Math.ceil(kept * 0.6)
    return `${text.slice(0, head)}…${text.slice(text.length - (kept - head))}`
  }
  let low = 0
  let high = text.length - 1
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (textWidth(cut(middle)) <= room) low = middle
    else high = middle - 1
  }
  return cut(Math.max(2, low))
}

/**
 * The left margin of a vertical value axis whose values reach `highest`: its widest tick label
 * (the value rounded up to the next tick, grouped with commas as Plot writes them) plus the tick.
 */
export function valueMargin(highest: number): number {
  const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(Math.max(1, highest))))
  const widest = Math.ceil(highest / magnitude) * magnitude
  return Math.ceil(textWidth(widest.toLocaleString('en-US')) + 14)
}

/** Every how many bands a tick label can be written, when `count` bands share `room` pixels and a label needs `labelRoom`. */
export function tickStep(count: number, room: number, labelRoom: number): number {
  const band = room / Math.max(1, count)
  return Math.max(1, Math.ceil(labelRoom / band))
}
