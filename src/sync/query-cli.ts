import { DuckDBInstance } from '@duckdb/node-api'
import { invokedAs } from '../cli/invoked-as.ts'
import { escapeTerminal as printable } from '../cli/terminal-text.ts'

/**
 * `npm run -s duckdb -- <file.duckdb> "<SQL>"`: runs one query on a DuckDB file (the mirror `sync`
 * keeps) and prints the result as an aligned table, so that the file can be looked at right
 * after `npm install`, without DuckDB's own command-line tool.
 */
export async function runQueryCommand(argv: string[], io: { out: (text: string) => void; err: (text: string) => void }): Promise<number> {
  const [file, sql, ...rest] = argv
  const usage = `usage: ${invokedAs('duckdb')} <file.duckdb> "<SQL>"\n`
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(usage)
    return 0
  }
  if (!file || !sql || rest.length > 0) {
    io.err(usage)
    return 2
  }
  let instance: DuckDBInstance | undefined
  try {
    instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' })
    const connection = await instance.connect()
    try {
      const reader = await connection.runAndReadAll(sql)
      io.out(formatTable(reader.columnNames().map(printable), reader.getRowsJson().map((row) => row.map((value) => printable(cell(value))))))
    } finally {
      connection.closeSync()
    }
    return 0
  } catch (error) {
    io.err(`duckdb: ${printable((error instanceof Error ? error.message : String(error)).split('\n')[0]!)}\n`)
    return 1
  } finally {
    instance?.closeSync()
  }
}

function cell(value: unknown): string {
  if (value === null) return 'NULL'
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

function formatTable(columns: string[], rows: string[][]): string {
  const widths = columns.map((name, i) => Math.max(name.length, ...rows.map((row) => row[i]!.length)))
  const line = (values: string[]) => values.map((value, i) => value.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), `(${rows.length} row${rows.length === 1 ? '' : 's'})`, ''].join('\n')
}

if (import.meta.main) {
  process.exitCode = await runQueryCommand(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) })
}
