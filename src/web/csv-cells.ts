// Cells of the CSV files the page writes itself (the charts' numbers, the file with names and
// local times). The API's own export is never passed through here: it stays byte for byte.

/**
 * The UTF-8 byte-order mark (EF BB BF) that starts every file the page writes itself: without it
 * LibreOffice's default import and Excel's double-click read the bytes as Latin-1 ("MalmÃ¶").
 */
export const UTF8_BOM = '\uFEFF'

/** A first character that makes a spreadsheet read the cell as a formula (OWASP's list). */
const FORMULA_START = /^[=+\-@\t\r]/
const FORMULA_FIRST_BYTES = new Set([0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d])

/** Whether a cell whose first byte is `byte` would start a formula (FORMULA_START, read from bytes). */
export function startsFormula(byte: number): boolean {
  return FORMULA_FIRST_BYTES.has(byte)
}

/**
 * One field in the export's dialect (quoted only when it holds a comma, quote or line break),
 * with a leading `'` when it would start a formula: a queue named `=HYPERLINK(…)` stays text.
 */
export function csvCell(value: string): string {
  return quoted(FORMULA_START.test(value) ? `'${value}` : value)
}

/** A field quoted only when it must be, with no formula guard: for the .xlsx worker, whose cells are never formulas. */
export function plainCell(value: string): string {
  return quoted(value)
}

function quoted(safe: string): string {
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** A record: its cells joined by commas, ended by CRLF as the export's are. */
export function csvRecord(values: readonly string[]): string {
  return values.map(csvCell).join(',') + '\r\n'
}

/** A record of plainCell fields. */
export function plainRecord(values: readonly string[]): string {
  return values.map(plainCell).join(',') + '\r\n'
}
