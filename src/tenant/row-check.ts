import type { Database } from 'bun:sqlite'
import { TICKET_STATUSES } from '../contract/vocabulary.ts'
import { AMBIGUOUS_ABBREVIATIONS, checkZone, MAX_ZONE_NAME_LENGTH } from '../contract/time-zone.ts'

/**
 * The value rules of the tenant contract (docs/operations.md#what-a-row-must-hold), written once
 * and read three ways: as SQL for the triggers of schema version 4 (a writer's bad row is refused
 * when written), as SQL for `admin check` (the bad rows of an older file), and as a pure function
 * for the rows the API is about to serve (it never serves one that breaks them).
 *
 * The types of the contract's columns are only affinities to SQLite: without these rules a BLOB
 * fits in `called_at`, text in `number`, and both reach JSON and CSV as garbage.
 */

/** What one column may hold, besides NULL where the column allows it. */
type ValueKind =
  /** An identifier: text, not empty, no NUL character (ids become CSV fields and warehouse keys). */
  | 'id'
  /** Served text: text without a NUL character (PostgreSQL's COPY refuses one). */
  | 'text'
  /** A personal column, never served: text, nothing more is asked. */
  | 'personal-text'
  /** The one canonical instant form: `YYYY-MM-DDTHH:MM:SS.sssZ`, UTC, 24 characters, a real date. */
  | 'timestamp'
  /** A ticket number: an integer from 0 to 2^31−1 (every warehouse's `integer`). */
  | 'ticket-number'
  /** A ticket status of the contract. */
  | 'status'
  /** A personal integer column, never served: an integer, nothing more is asked. */
  | 'personal-integer'
  /**
   * An IANA time zone name (src/contract/time-zone.ts). SQL checks its form and refuses the
   * ambiguous abbreviations; whether the zone exists only Intl knows, so that part is checked
   * where the value is read (served, `admin check`), never by the file's triggers.
   */
  | 'time-zone'

export interface ColumnRule {
  column: string
  kind: ValueKind
  nullable: boolean
  /** The schema version that added the column to the contract (absent: version 1). */
  since?: number
}

/** The largest ticket number: 2^31−1, the top of a signed 32-bit integer. */
export const MAX_TICKET_NUMBER = 2 ** 31 - 1

const required = (column: string, kind: ValueKind): ColumnRule => ({ column, kind, nullable: false })
const optional = (column: string, kind: ValueKind): ColumnRule => ({ column, kind, nullable: true })

/** The schema version that adds `locations.time_zone` (src/tenant/migrations.ts). */
export const TIME_ZONE_VERSION = 5

/** Every column of the contract's four tables, with the rule its values follow. */
export const ROW_RULES = {
  locations: [required('id', 'id'), required('name', 'text'), required('slug', 'text'), { ...optional('time_zone', 'time-zone'), since: TIME_ZONE_VERSION }],
  queues: [required('id', 'id'), required('location_id', 'id'), required('name', 'text'), required('slug', 'text'), required('status', 'text')],
  device_sessions: [
    required('id', 'id'),
    optional('location_id', 'id'),
    optional('device_name', 'text'),
    required('started_at', 'timestamp'),
    optional('ended_at', 'timestamp'),
  ],
  tickets: [
    required('id', 'id'),
    required('number', 'ticket-number'),
    required('queue_id', 'id'),
    required('location_id', 'id'),
    required('status', 'status'),
    required('created_at', 'timestamp'),
    optional('called_at', 'timestamp'),
    optional('completed_at', 'timestamp'),
    optional('cancelled_at', 'timestamp'),
    optional('skipped_at', 'timestamp'),
    optional('no_show_at', 'timestamp'),
    optional('called_by_device_session_id', 'id'),
    optional('customer_name', 'personal-text'),
    optional('notes', 'personal-text'),
    optional('party_size', 'personal-integer'),
    optional('bearer_hash', 'personal-text'),
  ],
} as const satisfies Record<string, readonly ColumnRule[]>

export type ContractTable = keyof typeof ROW_RULES
export const CONTRACT_TABLES = Object.keys(ROW_RULES) as ContractTable[]

/** What a broken value should have been, said to the writer (trigger), the operator (`admin check`) and the log. */
const KIND_TEXT: Record<ValueKind, string> = {
  id: 'a non-empty text without NUL characters',
  text: 'a text without NUL characters',
  'personal-text': 'a text',
  timestamp: 'a UTC instant written YYYY-MM-DDTHH:MM:SS.sssZ',
  'ticket-number': `an integer from 0 to ${MAX_TICKET_NUMBER}`,
  status: `one of ${TICKET_STATUSES.join(', ')}`,
  'personal-integer': 'an integer',
  'time-zone': 'an IANA time zone name (Area/Place, e.g. Europe/Zurich; not an abbreviation or offset)',
}

/** What a value of the rule must be, in words: `tickets.number must be an integer from 0 to 2147483647`. */
export function ruleText(table: ContractTable, rule: ColumnRule): string {
  return `${table}.${rule.column} must be ${KIND_TEXT[rule.kind]}${rule.nullable ? ' or NULL' : ''}`
}

// ---- the rules as SQL ------------------------------------------------------------------------

/** GLOB pattern of the canonical instant's shape; the strftime round trip then proves it a real date. */
const TIMESTAMP_GLOB = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'

/**
 * SQL that is true when the non-NULL value `v` follows the kind. NUL is looked for in the bytes
 * (`CAST AS BLOB`): SQLite's text functions stop at the first NUL.
 */
function kindSql(kind: ValueKind, v: string): string {
  const noNul = `instr(CAST(${v} AS BLOB), x'00') = 0`
  switch (kind) {
    case 'id':
      return `typeof(${v}) = 'text' AND ${v} <> '' AND ${noNul}`
    case 'text':
      return `typeof(${v}) = 'text' AND ${noNul}`
    case 'personal-text':
      return `typeof(${v}) = 'text'`
    case 'timestamp':
      // strftime gives back exactly the input only for a real instant in the canonical form
      // (2026-02-30 comes back as another day or NULL); a NUL makes the lengths differ.
      return `typeof(${v}) = 'text' AND ${v} GLOB '${TIMESTAMP_GLOB}' AND strftime('%Y-%m-%dT%H:%M:%fZ', ${v}) IS ${v}`
    case 'ticket-number':
      return `typeof(${v}) = 'integer' AND ${v} BETWEEN 0 AND ${MAX_TICKET_NUMBER}`
    case 'status':
      return `typeof(${v}) = 'text' AND ${v} IN (${TICKET_STATUSES.map((s) => `'${s}'`).join(', ')})`
    case 'personal-integer':
      return `typeof(${v}) = 'integer'`
    case 'time-zone':
      return `typeof(${v}) = 'text' AND ${noNul} AND length(${v}) BETWEEN 1 AND ${MAX_ZONE_NAME_LENGTH} AND ${v} NOT GLOB '*[^A-Za-z0-9/_+-]*' AND upper(${v}) NOT GLOB '[+-]*' AND upper(${v}) NOT GLOB 'UTC[+-]*' AND upper(${v}) NOT GLOB 'GMT[+-]*' AND upper(${v}) NOT IN (${Object.keys(AMBIGUOUS_ABBREVIATIONS).map((a) => `'${a}'`).join(', ')})`
  }
}

/** SQL true when the column's value (read as `prefix` + column) follows its rule. */
export function ruleSql(rule: ColumnRule, prefix = ''): string {
  const v = `${prefix}"${rule.column}"`
  return rule.nullable ? `(${v} IS NULL OR (${kindSql(rule.kind, v)}))` : `(${v} IS NOT NULL AND ${kindSql(rule.kind, v)})`
}

/** The table's rules of the columns a file of schema `version` has (a column added later has none yet). */
export function rulesAt(table: ContractTable, version: number): readonly ColumnRule[] {
  return ROW_RULES[table].filter((rule: ColumnRule) => (rule.since ?? 1) <= version)
}

/** SQL true when a whole row of the table (columns read as `prefix` + column) follows every rule of `rules`. */
export function rowSql(table: ContractTable, prefix = '', rules: readonly ColumnRule[] = ROW_RULES[table]): string {
  return rules.map((rule) => ruleSql(rule, prefix)).join('\n  AND ')
}

/**
 * SQL true when a row as the API selects it (its columns under their property names, as the
 * ticket queries alias them: `calledAt`) follows the rules of the columns it serves. For a check
 * of a whole selection in SQL: `SELECT … FROM (<the export's query>) WHERE NOT (<this>)`.
 */
export function servedRowSql(table: ContractTable): string {
  return PROPERTY_RULES[table]
    .filter(({ rule }) => !rule.kind.startsWith('personal'))
    .map(({ rule, key }) => ruleSql({ ...rule, column: key }))
    .join(' AND ')
}

function triggerName(table: ContractTable, event: 'INSERT' | 'UPDATE'): string {
  return `${table}_contract_before_${event.toLowerCase()}`
}

/** The names of the triggers of schema version 4, two per table. */
export const CONTRACT_TRIGGERS: readonly string[] = CONTRACT_TABLES.flatMap((table) => [triggerName(table, 'INSERT'), triggerName(table, 'UPDATE')])

/**
 * SQL giving 1 when every trigger of version 4 is in the file. A file whose triggers were
 * dropped (by hand: no migration does it) no longer guarantees its rows, whatever its version.
 */
export const CONTRACT_TRIGGERS_PRESENT_SQL = `SELECT count(*) = ${CONTRACT_TRIGGERS.length} AS present FROM sqlite_schema WHERE type = 'trigger' AND name IN (${CONTRACT_TRIGGERS.map((name) => `'${name}'`).join(', ')})`

/**
 * The triggers of schema version 4: before a row is inserted or updated, each column is checked
 * and the first broken one aborts the writer's statement with the rule it broke. The text is
 * written into files the administration application owns, so it explains itself.
 */
export function contractTriggersSql(): string {
  return CONTRACT_TABLES.map((table) => triggersSql(table, rulesAt(table, CONTRACT_TRIGGERS_SCHEMA), triggerName)).join('\n')
}

/** The version whose triggers hold the rules of the columns the contract had then (src/tenant/migrations.ts). */
const CONTRACT_TRIGGERS_SCHEMA = 4

/** The names of the triggers of schema version 5, which check `locations.time_zone`. */
export const TIME_ZONE_TRIGGERS: readonly string[] = ['locations_time_zone_before_insert', 'locations_time_zone_before_update']

/**
 * The triggers of schema version 5: those of version 4 for the one column it adds, under their
 * own names, so that each version's step back drops what it made.
 */
export function timeZoneTriggersSql(): string {
  const rules = ROW_RULES.locations.filter((rule: ColumnRule) => rule.since === TIME_ZONE_VERSION)
  return triggersSql('locations', rules, (_, event) => (event === 'INSERT' ? TIME_ZONE_TRIGGERS[0]! : TIME_ZONE_TRIGGERS[1]!))
}

function triggersSql(table: ContractTable, rules: readonly ColumnRule[], nameOf: (table: ContractTable, event: 'INSERT' | 'UPDATE') => string): string {
  return (['INSERT', 'UPDATE'] as const)
      .map((event) => {
        // An update checks the columns it changes only: the others held to the rules already
        // (a file reaches version 4 only with every row good), and checking an instant costs.
        const broken = (rule: ColumnRule) => (event === 'UPDATE' ? `(NEW."${rule.column}" IS NOT OLD."${rule.column}" AND NOT ${ruleSql(rule, 'NEW.')})` : `NOT ${ruleSql(rule, 'NEW.')}`)
        const checks = rules.map((rule) => `  SELECT RAISE(ABORT, 'tenant contract: ${ruleText(table, rule)}') WHERE ${broken(rule)};`).join('\n')
        // The WHEN clause checks a good row in one expression; only a bad one runs the body,
        // which names the first rule it breaks.
        return `CREATE TRIGGER ${nameOf(table, event)} BEFORE ${event} ON ${table}
WHEN ${rules.map(broken).join('\n  OR ')}
BEGIN
  -- Refuses a row that breaks the value rules of the tenant contract (types, canonical UTC
  -- instants, ticket numbers within 32 bits, no NUL, no empty id), which the analytics API
  -- would otherwise have to refuse to serve.
${checks}
END;`
      })
      .join('\n')
}

// ---- the rules over values read by bun:sqlite ----------------------------------------------

const TIMESTAMP_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const STATUSES: ReadonlySet<unknown> = new Set(TICKET_STATUSES)

/** Two or four digits of `text` at `at` as a number (the shape is checked first). */
function digits(text: string, at: number, count: number): number {
  let n = 0
  for (let i = at; i < at + count; i++) n = n * 10 + text.charCodeAt(i) - 48
  return n
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * The canonical instant: its shape, then a real date and time of day, read digit by digit
 * (cheaper than Date.parse, and this runs on every served row of an older file).
 */
export function isCanonicalInstant(text: string): boolean {
  if (text.length !== 24 || !TIMESTAMP_SHAPE.test(text)) return false
  const year = digits(text, 0, 4)
  const month = digits(text, 5, 2)
  const day = digits(text, 8, 2)
  if (month < 1 || month > 12 || day < 1) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!
  return day <= days && digits(text, 11, 2) <= 23 && digits(text, 14, 2) <= 59 && digits(text, 17, 2) <= 59
}

/** Whether a non-null value, as bun:sqlite returns it, follows the kind (the same rules as `kindSql`). */
function kindHolds(kind: ValueKind, value: unknown): boolean {
  switch (kind) {
    case 'id':
      return typeof value === 'string' && value !== '' && !value.includes('\0')
    case 'text':
      return typeof value === 'string' && !value.includes('\0')
    case 'personal-text':
      return typeof value === 'string'
    case 'timestamp':
      return typeof value === 'string' && isCanonicalInstant(value)
    case 'ticket-number':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TICKET_NUMBER
    case 'status':
      return STATUSES.has(value)
    case 'personal-integer':
      return (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint'
    case 'time-zone':
      return typeof value === 'string' && value.trim() === value && checkZone(value).zone !== null
  }
}

/** Whether one value follows its column's rule. */
export function valueHolds(rule: ColumnRule, value: unknown): boolean {
  return value === null ? rule.nullable : value !== undefined && kindHolds(rule.kind, value)
}

/** A row that breaks the contract: which one and why, for the log and `admin check` (never a value). */
export interface RowBreach {
  table: ContractTable
  /** The row's id when it is a printable text, else null (a BLOB or empty id is itself the breach). */
  id: string | null
  columns: string[]
  rules: string[]
}

/** The property a served object gives a column: `called_at` → `calledAt`, as src/contract/ names them. */
function propertyOf(column: string): string {
  return column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())
}

/** Each table's rules with the property names of their columns, worked out once. */
const PROPERTY_RULES = Object.fromEntries(
  CONTRACT_TABLES.map((table) => [table, ROW_RULES[table].map((rule) => ({ rule, key: propertyOf(rule.column) }))]),
) as Record<ContractTable, { rule: ColumnRule; key: string }[]>

/**
 * Checks a row about to be served (a ticket, location or queue as the API shapes it, keyed by
 * the contract's property names). Only the columns the row carries are checked: the personal
 * ones are never read. Returns undefined when the row holds to the contract.
 */
export function findBreach(table: ContractTable, row: Readonly<Record<string, unknown>>): RowBreach | undefined {
  let breach: RowBreach | undefined
  for (const { rule, key } of PROPERTY_RULES[table]) {
    if (!(key in row) || valueHolds(rule, row[key])) continue
    breach ??= { table, id: printableId(row.id), columns: [], rules: [] }
    breach.columns.push(rule.column)
    breach.rules.push(ruleText(table, rule))
  }
  return breach
}

/** The first row of `rows` that breaks the contract, if any: one pass, no allocation for good rows. */
export function firstBreach(table: ContractTable, rows: Iterable<Readonly<Record<string, unknown>>>): RowBreach | undefined {
  for (const row of rows) {
    const breach = findBreach(table, row)
    if (breach) return breach
  }
  return undefined
}

/** An id as it may be shown: a non-empty text, NULs escaped; anything else is not shown. */
export function printableId(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.replaceAll('\0', '\\0') : null
}

// ---- the rules over a whole file (`admin check`, and the migration to version 4) --------------

/** A stored row that breaks the contract, with its rowid: the one handle on a row whose id is the breach. */
export interface StoredBreach extends RowBreach {
  rowid: number
}

/** Every row of the contract's tables that breaks a rule: how many, and the first `limit` of them. */
export interface BreachScan {
  count: number
  rows: StoredBreach[]
}

/** Reads every row of the four tables once (a full scan of each; for `admin check` and a migration). */
export function scanBreaches(db: Database, limit: number): BreachScan {
  const scan: BreachScan = { count: 0, rows: [] }
  const add = (table: ContractTable, row: Record<string, unknown>, failed: readonly ColumnRule[]) => {
    scan.count++
    if (scan.rows.length < limit) scan.rows.push({ table, rowid: Number(row.rowid), id: printableId(row.id), columns: failed.map((r) => r.column), rules: failed.map((r) => ruleText(table, r)) })
  }
  for (const table of CONTRACT_TABLES) {
    // The rules of the columns this file has: a file older than the one adding a column lacks it.
    const present = new Set((db.query(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((c) => c.name))
    const rules = ROW_RULES[table].filter((rule: ColumnRule) => rule.since === undefined || present.has(rule.column))
    const broken = rules.map((rule, i) => `NOT ${ruleSql(rule)} AS "b${i}"`).join(', ')
    const statement = db.prepare(`SELECT rowid AS "rowid", "id" AS "id", ${broken} FROM "${table}" WHERE NOT (${rowSql(table, '', rules)}) ORDER BY rowid`)
    try {
      for (const row of statement.iterate() as IterableIterator<Record<string, unknown>>) add(table, row, rules.filter((_, i) => row[`b${i}`] === 1))
    } finally {
      statement.finalize()
    }
    // What SQL cannot check (whether a time zone exists), checked in JavaScript on the rows SQL passed.
    for (const rule of rules.filter((r) => r.kind === 'time-zone')) {
      const rows = db.query(`SELECT rowid AS "rowid", "id" AS "id", "${rule.column}" AS "value" FROM "${table}" WHERE "${rule.column}" IS NOT NULL AND ${rowSql(table, '', rules)} ORDER BY rowid`).all() as Record<string, unknown>[]
      for (const row of rows) if (!valueHolds(rule, row.value)) add(table, row, [rule])
    }
  }
  return scan
}
