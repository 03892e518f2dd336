import { TicketSchema } from '../contract/schemas.ts'
import { TICKET_FIELDS, type TicketField } from '../contract/vocabulary.ts'

/**
 * The mirror's `tickets` columns, derived from the contract's ticket schema so that a field the
 * contract adds or retypes reaches both warehouse targets without being spelled out again: the
 * CSV export's column order (TICKET_FIELDS), a snake_case name, and a kind that each target maps
 * to its own SQL type. A member that may be null is a nullable column; the others are NOT NULL.
 */

export type ColumnKind = 'text' | 'integer' | 'timestamp'

export interface TicketColumn {
  /** The contract's name, which is also the CSV export's header. */
  field: TicketField
  /** The column's name in the warehouse. */
  name: string
  kind: ColumnKind
  nullable: boolean
}

interface SchemaNode {
  type?: string
  format?: string
  anyOf?: SchemaNode[]
}

function describe(field: TicketField): TicketColumn {
  const node = (TicketSchema.properties as Record<string, SchemaNode>)[field]!
  const variants = node.anyOf ?? [node]
  const value = variants.find((variant) => variant.type !== 'null')!
  const kind: ColumnKind = value.type === 'integer' ? 'integer' : value.format === 'date-time' ? 'timestamp' : 'text'
  return { field, name: field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), kind, nullable: variants.some((variant) => variant.type === 'null') }
}

export const TICKET_COLUMNS: readonly TicketColumn[] = TICKET_FIELDS.map(describe)

/** `a, b, c`: the columns' names, optionally qualified by a table alias. */
export function columnList(alias?: string): string {
  return TICKET_COLUMNS.map((column) => (alias ? `${alias}.${column.name}` : column.name)).join(', ')
}

/** A predicate true when row `a` and row `b` differ in any column (NULL-safe). */
export function rowsDiffer(a: string, b: string): string {
  return TICKET_COLUMNS.filter((column) => column.name !== 'id')
    .map((column) => `${a}.${column.name} IS DISTINCT FROM ${b}.${column.name}`)
    .join(' OR ')
}

/** `CREATE TABLE` column definitions, each kind typed by `types`. */
export function columnDefinitions(types: Record<ColumnKind, string>): string {
  return TICKET_COLUMNS.map((column) => `${column.name} ${types[column.kind]}${column.nullable ? '' : ' NOT NULL'}`).join(',\n    ')
}
