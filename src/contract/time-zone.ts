// IANA time zone names, checked and spelled one way for the server (a location's zone in the
// tenant file, served by GET /v1/queues) and the page (the zone the analyst picks). Pure
// functions on Intl, which differs between runtimes: Bun gives a name back as typed, Chromium
// and Node give ICU's older spelling (`Asia/Kolkata` comes back `Asia/Calcutta`), and Chromium
// takes `IST` for India although Israel and Ireland use it too.

/**
 * The names ICU (Chromium, Node) still gives for zones IANA has renamed, with IANA's name: what
 * the page shows and serves instead. Other links (`US/Eastern`) are kept as written.
 */
export const RENAMED_ZONES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
  'Etc/UTC': 'UTC',
  'Etc/UCT': 'UTC',
  'Etc/Universal': 'UTC',
  'Etc/Zulu': 'UTC',
  UCT: 'UTC',
  Universal: 'UTC',
  Zulu: 'UTC',
}

/**
 * Abbreviations people type for a zone, each shared by places with different clocks (or
 * standing for half a year of one): refused, naming the zones it may mean. `EST`, `MST`, `HST`
 * and `CET` are IANA names too, but of fixed offsets or a link few mean (EST is Panama's time).
 */
export const AMBIGUOUS_ABBREVIATIONS: Readonly<Record<string, readonly string[]>> = {
  IST: ['Asia/Kolkata', 'Asia/Jerusalem', 'Europe/Dublin'],
  CST: ['America/Chicago', 'Asia/Shanghai', 'America/Havana'],
  CDT: ['America/Chicago', 'America/Havana'],
  BST: ['Europe/London', 'Asia/Dhaka'],
  AST: ['America/Halifax', 'Asia/Riyadh'],
  ADT: ['America/Halifax'],
  EST: ['America/New_York', 'America/Toronto', 'America/Panama'],
  EDT: ['America/New_York', 'America/Toronto'],
  CET: ['Europe/Paris', 'Europe/Berlin', 'Europe/Zurich'],
  CEST: ['Europe/Paris', 'Europe/Berlin', 'Europe/Zurich'],
  EET: ['Europe/Athens', 'Europe/Helsinki', 'Africa/Cairo'],
  EEST: ['Europe/Athens', 'Europe/Helsinki'],
  WET: ['Europe/Lisbon', 'Atlantic/Canary'],
  WEST: ['Europe/Lisbon', 'Atlantic/Canary'],
  MET: ['Europe/Paris', 'Europe/Berlin'],
  MST: ['America/Denver', 'America/Phoenix'],
  MDT: ['America/Denver'],
  PST: ['America/Los_Angeles', 'Asia/Manila'],
  PDT: ['America/Los_Angeles'],
  HST: ['Pacific/Honolulu'],
  AKST: ['America/Anchorage'],
  SST: ['Pacific/Pago_Pago', 'Asia/Singapore'],
  GST: ['Asia/Dubai', 'Atlantic/South_Georgia'],
  MSK: ['Europe/Moscow'],
  JST: ['Asia/Tokyo'],
  KST: ['Asia/Seoul'],
  AEST: ['Australia/Sydney', 'Australia/Melbourne', 'Australia/Brisbane'],
  AEDT: ['Australia/Sydney', 'Australia/Melbourne'],
  ACST: ['Australia/Adelaide', 'Australia/Darwin'],
  AWST: ['Australia/Perth'],
  NZST: ['Pacific/Auckland'],
  SAST: ['Africa/Johannesburg'],
}

/** The longest zone name taken (IANA's longest is 32 characters). */
export const MAX_ZONE_NAME_LENGTH = 64

/** The characters of an IANA name: `America/Port-au-Prince`, `Etc/GMT+5`. */
const ZONE_NAME_SHAPE = /^[A-Za-z0-9/_+-]+$/

/** Why a name is no zone. */
export type ZoneRefusal = 'empty' | 'abbreviation' | 'offset' | 'malformed' | 'unknown'

/** What a name resolves to: the zone's name as the page and API spell it, or why it is none (a sentence, and the zones an abbreviation may mean). */
export type ZoneCheck = { zone: string } | { zone: null; refusal: ZoneRefusal; problem: string; candidates: readonly string[] }

function refused(refusal: ZoneRefusal, problem: string, candidates: readonly string[] = []): ZoneCheck {
  return { zone: null, refusal, problem, candidates }
}

/** The listed spelling of a name, case aside (`europe/amsterdam` → `Europe/Amsterdam`); Intl keeps the case typed. */
let listedByLowerCase: Map<string, string> | undefined
function listedSpelling(name: string): string | undefined {
  listedByLowerCase ??= new Map((typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []).map((zone) => [zone.toLowerCase(), zone]))
  return listedByLowerCase.get(name.toLowerCase())
}

/**
 * Checks a zone name and gives its one spelling: an IANA name this runtime's Intl knows, IANA's
 * current name for a renamed one (`Asia/Calcutta` → `Asia/Kolkata`), in its listed case. Refused:
 * an empty name, an ambiguous abbreviation (with the zones it may mean), an offset (`+05:30`, which
 * knows no daylight saving time), a name Intl does not know.
 */
export function checkZone(input: string): ZoneCheck {
  // Intl takes 60-90 µs to build a formatter (Bun, 2 cores), and GET /v1/queues checks every
  // location's zone on every call: answers are kept, a bounded number (names come from files).
  let known = checked.get(input)
  if (known === undefined) {
    if (checked.size >= MAX_CHECKED) checked.clear()
    known = uncachedCheck(input)
    checked.set(input, known)
  }
  return known
}

const MAX_CHECKED = 1024
const checked = new Map<string, ZoneCheck>()

function uncachedCheck(input: string): ZoneCheck {
  const name = input.trim()
  if (name === '') return refused('empty', 'no time zone given')
  const abbreviation = AMBIGUOUS_ABBREVIATIONS[name.toUpperCase()]
  if (abbreviation) {
    const several = abbreviation.length > 1 ? ', used by more than one place' : ''
    return refused('abbreviation', `'${name.toUpperCase()}' is an abbreviation${several}, not a time zone; name the place: ${abbreviation.join(', ')}`, abbreviation)
  }
  if (/^(UTC|GMT)?\s*[+\-−]\s*\d/i.test(name)) return refused('offset', `'${name.slice(0, 20)}' is an offset, not a time zone (it knows no daylight saving time); name the place, e.g. Asia/Kolkata`)
  if (name.length > MAX_ZONE_NAME_LENGTH || !ZONE_NAME_SHAPE.test(name)) return refused('malformed', `'${name.slice(0, 40)}' is not an IANA time zone name (Area/Place, e.g. Europe/Zurich)`)
  let resolved: string
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return refused('unknown', `'${name}' is not a time zone this runtime knows (IANA names, e.g. Europe/Zurich)`)
  }
  // Chromium resolves to ICU's spelling (Asia/Calcutta), Bun keeps the name as typed.
  const spelled = listedSpelling(resolved) ?? listedSpelling(name) ?? resolved
  return { zone: RENAMED_ZONES[spelled] ?? spelled }
}

/** The zone's one spelling, or null when checkZone refuses it. */
export function canonicalZoneName(name: string): string | null {
  return checkZone(name).zone
}
