// "What to export": the dates, the time zone, the locations and queues, the statuses and the
// line that says what the buttons will do. Reads the form into the API's query on demand.

import { compactInstant } from '../client/index.ts'
import { listNames, type Feedback, type PageRegion } from './feedback.ts'
import { namesFileName, workbookName } from './names-file.ts'
import { placeNames, readPlaces, renderPlaces, type PlaceSelection } from './places.ts'
import { MAX_DAYS, PRESETS, defaultRange, describeRange, presetRange, readRange, type Preset, type ReadRange } from './range.ts'
import { storeZone, storedZone, type Organisation } from './session.ts'
import { LocalClock, browserTimeZone, checkTypedZone, describeOffset, knownTimeZones, zoneAsTyped } from './zone.ts'

/** Bun refuses request lines over 16 KiB; stay well below with the ticked queues' ids. */
const MAX_QUERY_CHARS = 12_000

export interface RangeElements {
  form: HTMLFormElement
  from: HTMLInputElement
  to: HTMLInputElement
  toHelp: HTMLElement
  zone: HTMLInputElement
  zoneNames: HTMLElement
  zoneHelp: HTMLElement
  places: HTMLFieldSetElement
  placesList: HTMLElement
  statuses: HTMLElement
  summary: HTMLElement
  /** The quick ranges' buttons (data-preset) and the line that says what one set. */
  presets: HTMLElement
  rangeStatus: HTMLElement
  /** "Days and hours": in the chosen zone, or in each location's own; and the line under it. */
  dayZone: HTMLFieldSetElement
  dayZoneHelp: HTMLElement
}

/** Days and hours in each location's own time zone (docs/page.md#each-location-in-its-own-time). */
export interface DayZones {
  /** Location id → the zone its days and hours are in: its own, or the chosen one. */
  byLocation: Map<string, string>
  /** The locations with a zone of their own. */
  own: Set<string>
  /** Of the locations asked for, how many have no zone of their own and use the chosen one. */
  fallback: number
  /** How many locations are asked for, and in how many zones. */
  locations: number
  zones: number
}

/** What the form asks: the API's parameters, the local days and their zone, and the selection in words. */
export interface PageQuery {
  params: URLSearchParams
  selection: string
  summary: string
  range: ReadRange
  clock: LocalClock
  /** Set when days and hours are each location's own; null when they are the chosen zone's. */
  zones: DayZones | null
}

export class RangeController {
  /** The time zone whose local days the range means, and its clock. */
  clock = new LocalClock(zoneAsTyped(storedZone() ?? '') ?? browserTimeZone())
  private locations: Organisation['locations'] = []
  private readonly zoneListeners: (() => void)[] = []

  constructor(
    private readonly els: RangeElements,
    private readonly feedback: Feedback<PageRegion>,
  ) {
    els.form.addEventListener('input', () => this.updateSummary())
    els.zone.addEventListener('change', () => this.useZone())
    // Enter in the zone field takes the zone; it does not submit the form (that would preview).
    els.zone.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return
      event.preventDefault()
      this.useZone()
    })
    els.presets.addEventListener('click', (event) => {
      const preset = (event.target as HTMLElement).closest<HTMLElement>('[data-preset]')?.dataset.preset
      if (preset && preset in PRESETS) this.usePreset(preset as Preset)
    })
    els.dayZone.addEventListener('change', () => {
      this.showDayZones()
      this.updateSummary()
      for (const listener of this.zoneListeners) listener()
    })
    els.zoneNames.replaceChildren(...knownTimeZones().map((zone) => Object.assign(document.createElement('option'), { value: zone })))
    this.showZone()
    const range = defaultRange(Date.now(), this.clock)
    els.from.value = range.from
    els.to.value = range.to
    this.updateSummary()
  }

  /** Sets From and To to a quick range of the zone in use, and says which days they are (read out). */
  private usePreset(preset: Preset): void {
    const range = presetRange(preset, Date.now(), this.clock)
    this.els.from.value = range.from
    this.els.to.value = range.to
    this.els.from.removeAttribute('aria-invalid')
    this.els.to.removeAttribute('aria-invalid')
    const days = range.lastDay - range.firstDay + 1
    const partial = range.lastDay >= this.today() ? ', today so far included' : ''
    this.els.rangeStatus.textContent = `${PRESETS[preset]}: ${describeRange(range)} (${days} day${days === 1 ? '' : 's'} in ${this.clock.zone}${partial}).`
    this.updateSummary()
  }

  /** Today's local day in the zone in use. */
  today(): number {
    return this.clock.local(Date.now()).day
  }

  /** `listener` hears of a zone newly chosen (the charts on show are then drawn again). */
  onZone(listener: () => void): void {
    this.zoneListeners.push(listener)
  }

  /** Runs `handler` when the form is submitted (Enter in a field, or the Preview button). */
  onSubmit(handler: (event: Event) => void): void {
    this.els.form.addEventListener('submit', handler)
  }

  /** The organisation's locations and queues to pick from, or none (no token). */
  showOrganisation(organisation: Organisation | null): void {
    this.locations = organisation?.locations ?? []
    if (organisation) {
      renderPlaces(this.els.placesList, organisation.locations, () => this.updateSummary())
      this.els.places.disabled = false
    } else {
      this.els.places.disabled = true
      this.els.placesList.innerHTML = '<p class="hint">Use a token to load your locations and queues.</p>'
    }
    this.showDayZones()
    this.updateSummary()
  }

  /**
   * The query of the form, or null after saying what to fix. The charts take any range (the
   * client splits it into windows of 90 days); a file covers at most 90 days.
   */
  read(purpose: 'file' | 'charts' = 'file'): PageQuery | null {
    const { from, to } = this.els
    from.removeAttribute('aria-invalid')
    to.removeAttribute('aria-invalid')
    const range = readRange(from.value, to.value, this.clock, purpose === 'charts' ? null : undefined)
    if (!range.ok) {
      const field = range.field === 'from' ? from : to
      field.setAttribute('aria-invalid', 'true')
      field.focus()
      this.feedback.show('range', range.message)
      return null
    }
    const { places, statuses } = this.selection()
    const zones = this.perLocation() ? this.dayZones(places) : null
    if (zones) {
      Object.assign(range, ownDaysBounds(zones, range))
      if (purpose === 'file' && range.toMs - range.fromMs > MAX_DAYS * 86_400_000) {
        to.setAttribute('aria-invalid', 'true')
        to.focus()
        this.feedback.show('range', `In each location's own time, ${range.days} days span more than ${MAX_DAYS} days of the API (the locations' midnights are hours apart); one file covers at most ${MAX_DAYS - 1} such days. Shorten the range; the charts take any range.`)
        return null
      }
    }
    // The zone's midnights as UTC instants: the API's days are UTC days, the analyst's are local.
    const params = new URLSearchParams({ from: new Date(range.fromMs).toISOString(), to: new Date(range.toMs).toISOString() })
    // All queues ticked is the same as none: the query then names no queue at all.
    if (!places.all) for (const id of places.queueIds) params.append('queueId', id)
    for (const status of statuses) params.append('status', status.value)
    if (params.toString().length > MAX_QUERY_CHARS) {
      this.feedback.show('query', `${places.queueIds.length} queues are too many for one request: tick fewer, or none for all queues.`)
      return null
    }
    const selection = describeSelection(places, statuses) + (zones ? `, days in each location's own time zone (${describeZones(zones, this.clock.zone)})` : '')
    return { params, selection, summary: `${selection}, ${describeRange(range)}`, range, clock: this.clock, zones }
  }

  /** Whether days and hours are each location's own (the choice under the zone). */
  perLocation(): boolean {
    return this.els.dayZone.querySelector<HTMLInputElement>('input[value="location"]')!.checked
  }

  /** Each location's zone (its own, else the chosen one) for the locations of the ticked queues (all when none). */
  private dayZones(places: PlaceSelection = readPlaces(this.els.placesList, this.locations)): DayZones {
    const names = placeNames(this.locations)
    const asked = places.all || places.queueIds.length === 0 ? null : new Set(places.queueIds.map((id) => names.queues.get(id)?.locationId))
    const byLocation = new Map<string, string>()
    const owning = new Set<string>()
    let fallback = 0
    for (const location of this.locations) {
      const own = location.timeZone ?? null
      byLocation.set(location.id, own ?? this.clock.zone)
      if (own) owning.add(location.id)
      if (asked && !asked.has(location.id)) continue
      if (!own) fallback++
    }
    const used = this.locations.filter((location) => !asked || asked.has(location.id))
    return { byLocation, own: owning, fallback, locations: used.length, zones: new Set(used.map((location) => byLocation.get(location.id))).size }
  }

  /** The line under "Days and hours": which zones, and who falls back to the chosen one. */
  private showDayZones(): void {
    if (this.locations.length === 0) {
      this.els.dayZoneHelp.textContent = "Each location's own time zone comes with the token's locations."
      return
    }
    const zones = this.dayZones()
    const own = this.locations.length - this.locations.filter((location) => !location.timeZone).length
    this.els.dayZoneHelp.textContent = this.perLocation()
      ? `Days and hours are each location's own: ${describeZones(zones, this.clock.zone)}.`
      : `Days and hours are ${this.clock.zone}'s for every location (${own} of ${this.locations.length} location${this.locations.length === 1 ? ' has' : 's have'} a time zone of their own).`
  }

  /** Queue id → its location's and its own name, for the charts and the file with names. */
  queuePlaces(): Map<string, { location: string; queue: string }> {
    const names = placeNames(this.locations)
    return new Map([...names.queues].map(([id, queue]) => [id, { location: names.locations.get(queue.locationId) ?? '', queue: queue.name }]))
  }

  /** Queue id → its location's zone, as `zones` has it (for the charts' worker). */
  queueZones(zones: DayZones): [string, string][] {
    return [...placeNames(this.locations).queues].map(([id, queue]) => [id, zones.byLocation.get(queue.locationId) ?? this.clock.zone])
  }

  private selection() {
    const statuses = [...this.els.statuses.querySelectorAll<HTMLInputElement>('input:checked')].map((box) => ({ value: box.value, label: box.parentElement!.textContent!.trim() }))
    return { places: readPlaces(this.els.placesList, this.locations), statuses }
  }

  /** The summary line above the buttons and the file-name hint next to To, kept in step with the form. */
  private updateSummary(): void {
    const { from, to } = this.els
    const range = readRange(from.value, to.value, this.clock)
    const { places, statuses } = this.selection()
    const what = describeSelection(places, statuses)
    const long = range.ok ? null : readRange(from.value, to.value, this.clock, null)
    // In each location's own days a file spans more of the API than its days: said here, before Download.
    const ownSpan = range.ok && this.perLocation() ? ownDaysBounds(this.dayZones(places), range) : null
    const ownTooLong = ownSpan !== null && ownSpan.toMs - ownSpan.fromMs > MAX_DAYS * 86_400_000
    // A range refused on Download and mended since: its message and marks go.
    if (range.ok && !ownTooLong && (from.getAttribute('aria-invalid') === 'true' || to.getAttribute('aria-invalid') === 'true')) {
      from.removeAttribute('aria-invalid')
      to.removeAttribute('aria-invalid')
      this.feedback.dismiss('range')
    }
    this.updateHints(range.ok ? (ownSpan?.toMs ?? range.toMs) : null)
    if (ownTooLong && range.ok) {
      this.els.summary.textContent = `Charts only: ${what}, ${describeRange(range)} (${range.days} days). In each location's own time a file covers at most ${MAX_DAYS - 1} days, so Preview and Download need a shorter range; the charts take any range.`
      return
    }
    this.els.summary.textContent = range.ok
      ? `Will export: ${what}, ${describeRange(range)} (${range.days} day${range.days === 1 ? '' : 's'}${range.lastDay >= this.today() ? '; today is not over: its tickets so far' : ''}).`
      : long?.ok
        ? `Charts only: ${what}, ${describeRange(long)} (${long.days} days). A file covers at most ${MAX_DAYS} days, so Preview and Download need a shorter range; the charts take any range.`
        : `Will export: ${what}, once the dates are valid.`
  }

  /** The hints under the dates and the names box, for the choices made: `toMs` is the file's end (null: no valid range). */
  private updateHints(toMs: number | null): void {
    const own = this.perLocation()
    const box = (id: string) => this.els.form.querySelector<HTMLInputElement>(`#${id}`)?.checked === true
    const workbook = box('as-xlsx')
    const names = namesFileName('', own ? 'each-location' : this.clock.zone)
    const ending = workbook ? workbookName(names) : box('with-names') ? names : '.csv'
    const text = (id: string, value: string) => {
      const hint = this.els.form.querySelector(`#${id}`)
      if (hint) hint.textContent = value
    }
    this.els.toHelp.textContent =
      toMs === null
        ? "To is included: the file name ends with the UTC instant of the midnight after it, because the API's end is exclusive."
        : `To is included: the file name ends with the UTC instant of the midnight after it${own ? ' (the latest location\'s)' : ''} (…_${compactInstant(toMs)}${ending}), because the API's end is exclusive.`
    text('range-help', own ? `At most ${MAX_DAYS - 1} days per file in each location's own time (their midnights are hours apart). For longer history, download several files; the charts take any range.` : `At most ${MAX_DAYS} days per file. For longer history, download several files; the charts take any range.`)
    text('with-names-times', own ? "each time in its location's own time zone, with localTimeZone and localTimeZoneFrom (the location's, or the chosen one for a location without)" : 'each time in the time zone above')
  }

  private showZone(): void {
    const zone = this.clock.zone
    this.els.zone.value = zone
    this.els.zone.removeAttribute('aria-invalid')
    this.els.zone.setAttribute('aria-describedby', 'zone-help')
    this.els.zoneHelp.textContent = `Days are local days in ${zone} (${describeOffset(this.clock.offset(Date.now()))} now): From starts at its midnight there and To ends at the midnight after it.`
  }

  /**
   * Takes the zone typed or picked in the control: a zone the browser knows becomes the page's
   * (remembered for the tab); anything else is refused, in a sentence.
   */
  private useZone(): void {
    const typed = this.els.zone.value.trim()
    const check = checkTypedZone(typed)
    if (check.zone === null) {
      // The refusal is said under the field and read with it.
      this.els.zone.setAttribute('aria-invalid', 'true')
      this.els.zone.setAttribute('aria-describedby', 'zone-message zone-help')
      this.els.zone.focus()
      // An abbreviation names the zones it may mean, an offset says why it is none.
      const why =
        check.refusal === 'abbreviation'
          ? `“${typed}” is an abbreviation, not a time zone${check.candidates.length > 1 ? ', and more than one place uses it' : ''}: type or pick the place's zone, such as ${check.candidates.length > 1 ? `${check.candidates.slice(0, -1).join(', ')} or ${check.candidates.at(-1)}` : check.candidates[0]}`
          : check.refusal === 'offset'
            ? `“${typed}” is an offset, not a time zone: it knows no daylight saving time. Type or pick the place's zone, such as Asia/Kolkata`
            : `“${typed}” is not a time zone this browser knows. Type an IANA name such as Europe/Amsterdam or America/New_York, or pick one from the list`
      this.feedback.show('zone', `${why}; the days stay in ${this.clock.zone}.`)
      return
    }
    const zone = check.zone
    this.feedback.clear()
    const changed = zone !== this.clock.zone
    this.clock = new LocalClock(zone)
    storeZone(zone)
    this.showZone()
    this.showDayZones()
    this.updateSummary()
    if (changed) for (const listener of this.zoneListeners) listener()
  }
}

/** "30 locations in 12 time zones; 2 without one use Europe/Amsterdam". */
function describeZones(zones: DayZones, chosen: string): string {
  const where = `${zones.locations} location${zones.locations === 1 ? '' : 's'} in ${zones.zones} time zone${zones.zones === 1 ? '' : 's'}`
  return zones.fallback === 0 ? where : `${where}; ${zones.fallback} without one of ${zones.fallback === 1 ? 'its' : 'their'} own use${zones.fallback === 1 ? 's' : ''} ${chosen}`
}

function describeSelection(places: PlaceSelection, statuses: { label: string }[]): string {
  const queues = places.queueIds.length === 0 || places.all
    ? 'all queues'
    : `${places.queueIds.length} queue${places.queueIds.length === 1 ? '' : 's'} in ${places.locationCount} location${places.locationCount === 1 ? '' : 's'}`
  const states = statuses.length === 0 || statuses.length === 6 ? 'all statuses' : `status ${listNames(statuses.map((s) => s.label))}`
  return `${queues}, ${states}`
}

/**
 * The API's bounds of a range in each location's own days: the earliest first midnight to the
 * latest last one (the names file then keeps each ticket only inside its own location's days).
 */
function ownDaysBounds(zones: DayZones, range: { firstDay: number; lastDay: number }): { fromMs: number; toMs: number } {
  const clocks = [...new Set(zones.byLocation.values())].map((zone) => new LocalClock(zone))
  return { fromMs: Math.min(...clocks.map((clock) => clock.startOfDay(range.firstDay))), toMs: Math.max(...clocks.map((clock) => clock.startOfDay(range.lastDay + 1))) }
}
