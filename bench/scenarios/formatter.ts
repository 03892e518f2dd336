import { bigTenantFile } from '../data.ts'
import { compareFormatters, readExportRows } from '../csv-formatter.ts'
import type { Scenario } from '../scenario.ts'

/** The export's CSV formatter against fast-csv's on the same 100k rows in memory (no SQLite, no server). */
export const formatter: Scenario = {
  name: 'formatter',
  title: "the export's CSV formatter against fast-csv, 100k rows in memory",
  needs: ['big-tenant'],
  async run({ big, report, settings, log }) {
    log('CSV formatter: ours vs fast-csv (100k rows in memory)')
    const rows = readExportRows(bigTenantFile(big), big.range100k.from, big.range100k.to)
    const result = await compareFormatters(rows, settings.runs + 2)
    if (!result.identical) log('  warning: the two formatters wrote different bytes')
    report.record({ figure: `CSV formatting only, own formatter (same bytes as fast-csv: ${result.identical ? 'yes' : 'NO'})`, value: result.ours, unit: 'rows/s', baseline: { name: 'fast-csv format()', value: result.fastCsv } })
  },
}
