// Cells of the CSV files the page writes itself (the charts' numbers, the file with names and
// local times). The API's own export is never passed through here: it stays byte for byte.

/** A first character that makes a spreadsheet read the cell as a formula (OWASP's list). */
const FORMULA_START = /^[=+\-@\t\r]/
/** The same, at the start of any field of a record without quotes. */
const FORMULA_FIELD = /(?:^|,)[=+\-@\t\r]/

/** Whether an unquoted record (fields joined by commas) can be written as it is: no field would start a formula. */
export function recordIsSafe(record: string): boolean {
  return !record.includes('"') && !FORMULA_FIELD.test(record)
}

/**
 * One field in the export's dialect (quoted only when it holds a comma, quote or line break),
 * with a leading `'` when it would start a formula: a queue named `=HYPERLINK(…)` stays text.
 */
export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** A record: its cells joined by commas, ended by CRLF as the export's are. */
export function csvRecord(values: readonly string[]): string {
  return values.map(csvCell).join(',') + '\r\n'
}
