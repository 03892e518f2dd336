import { RowBreachError, type TenantLease } from './lease.ts'
import { findBreach, firstBreach, servedRowSql, type ContractTable, type RowBreach } from './row-check.ts'

/**
 * The API never serves a row that breaks the contract's value rules
 * (docs/operations.md#what-a-row-must-hold): on a file that does not vouch for its rows (older
 * than version 4, or its triggers dropped), the rows a read is about to serve are checked, and
 * one that breaks a rule makes the answer 503 `data_unavailable`, logged with the row's id. A
 * version-4 file refused such rows when they were written, so its reads cost nothing more.
 */

/** Checks rows read on `lease` (as the API shapes them) before they are served; throws RowBreachError (the lease makes it the 503). */
export function checkServedRows(lease: TenantLease, table: ContractTable, rows: Iterable<Readonly<Record<string, unknown>>>): void {
  if (lease.schema().rowsGuaranteed) return
  const breach = firstBreach(table, rows)
  if (breach) throw new RowBreachError(breach)
}

/**
 * Checks every ticket a selection would serve, in SQL, before its first row is sent: the CSV
 * export's answer cannot turn into an error once it has started. One pass over the selection
 * in the same snapshot, stopped by the first bad row; only on a file that does not vouch for its rows.
 */
export function checkServedSelection(lease: TenantLease, select: { sql: string; values: readonly (string | number)[] }): void {
  if (lease.schema().rowsGuaranteed) return
  const row = lease.statement(`SELECT * FROM (${select.sql}) WHERE NOT (${servedRowSql('tickets')}) LIMIT 1`).get(...select.values) as Record<string, unknown> | null
  if (row) throw new RowBreachError(findBreach('tickets', row) ?? unexplained(row))
}

/** A row the SQL refused and the function did not (they agree on every value the tests try). */
function unexplained(row: Record<string, unknown>): RowBreach {
  return { table: 'tickets', id: typeof row.id === 'string' ? row.id : null, columns: [], rules: ['tickets: a value the API cannot serve'] }
}
