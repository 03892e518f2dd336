// The .xlsx writers measured for decision 0023: the same N rows of the names file's shape (14
// columns: ids, UTC instants and names as text, the ticket's number a number, three local times
// as dates) written by our writer (src/web/xlsx/) and by each npm candidate that runs in a
// browser, each in its own process (so each peak is its own), then read back by LibreOffice.
// Run in Bun as a stand-in for a browser worker (the libraries' browser builds are the same
// code; CompressionStream is Bun's own zlib rather than Chromium's).
//   npm install --no-save exceljs xlsx write-excel-file fflate
//   node_modules/.bin/bun bench/xlsx-libraries.ts [rows=100000,500000] [checkRows=5000]
// A writer whose process passes XLSX_BENCH_CAP_MB (3000) of RSS is stopped and said so.
// XLSX_LIBS=<folder> takes the libraries from <folder>/node_modules instead (to keep them out of the project's).

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sheetStream, workbookParts, workbookStream, type CellType } from '../src/web/xlsx/workbook.ts'
import { csvSheet } from '../src/web/xlsx/worker.ts'
import { zipStream } from '../src/web/xlsx/zip.ts'

const HEADER = ['id', 'number', 'queueId', 'locationId', 'status', 'createdAt', 'calledAt', 'completedAt', 'locationName', 'queueName', 'createdAtLocal', 'calledAtLocal', 'completedAtLocal', 'localTimeZone']
const TYPES: CellType[] = HEADER.map((name) => (name === 'number' ? 'number' : name.endsWith('Local') ? 'datetime' : 'text'))
const PLACES = ['Zürich Hauptbahnhof', 'Saint-Jean-sur-Richelieu', 'Lyon Old Town', 'São Paulo Centro', '=Downtown']
const QUEUES = ['Payments', 'Schalter 1 — Ämter', 'ID & Passports', '-Walk-ins', 'Renseignements généraux']
const DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/

const iso = (ms: number) => new Date(ms).toISOString()
const local = (ms: number) => iso(ms).slice(0, 19).replace('T', ' ')
/** Row `i` as the names file has it: every field a string. */
function row(i: number): string[] {
  const created = Date.UTC(2026, 2, 1) + i * 5_000
  const offset = ((i % 12) - 5) * 3_600_000
  return [`t${String(i).padStart(8, '0')}`, String(i + 1), `q${i % 133}`, `l${i % 30}`, 'COMPLETED', iso(created), iso(created + 240_000), iso(created + 660_000),
    PLACES[i % PLACES.length]!, QUEUES[i % QUEUES.length]!, local(created + offset), local(created + offset + 240_000), local(created + offset + 660_000), 'Europe/Zurich']
}
/** A row with typed values for the libraries: numbers as numbers, local times as Dates of the wall clock (read in UTC). */
function typed(fields: string[]): (string | number | Date)[] {
  return fields.map((value, i) => {
    if (TYPES[i] === 'number') return Number(value)
    if (TYPES[i] === 'datetime') {
      const [, y, mo, d, h, mi, s] = DATETIME.exec(value)!.map(Number)
      return new Date(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!))
    }
    return value
  })
}
async function* rows(n: number): AsyncGenerator<string[]> {
  for (let i = 0; i < n; i++) yield row(i)
}
const FORMAT = 'yyyy-mm-dd hh:mm:ss'

const lib = (name: string) => import(process.env.XLSX_LIBS ? join(process.env.XLSX_LIBS, 'node_modules', name) : name)

/** Each writer: how it is used in a browser worker (or as close as it allows), writing `file`. */
const WRITERS: Record<string, { how: string; write: (n: number, file: string) => Promise<void> }> = {
  ours: {
    how: 'src/web/xlsx: rows pulled one at a time, sheet deflated by CompressionStream, streamed out',
    async write(n, file) {
      await Bun.write(file, new Response(workbookStream('Tickets', HEADER, TYPES, rows(n))))
    },
  },
  'ours, from CSV bytes (as the page\'s worker)': {
    how: 'xlsx/worker.ts csvSheet: the names file\'s CSV bytes, 64 KB at a time, to sheet XML bytes, zipped as above',
    async write(n, file) {
      const encoder = new TextEncoder()
      let i = -1
      const csv = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (i >= n) return controller.close()
          let text = ''
          for (; text.length < 1 << 16 && i < n; i++) text += `${csvLine(i < 0 ? HEADER : row(i))}\r\n`
          controller.enqueue(encoder.encode(text))
        },
      })
      await Bun.write(file, new Response(zipStream(workbookParts('Tickets', csvSheet(csv)))))
    },
  },
  'exceljs (browser build: Workbook in memory)': {
    how: 'new Workbook(), addRow per row, xlsx.writeBuffer(): the only writer in its browser build',
    async write(n, file) {
      const ExcelJS = (await lib('exceljs')).default
      const workbook = new ExcelJS.Workbook()
      const sheet = workbook.addWorksheet('Tickets')
      sheet.columns = HEADER.map((header, i) => ({ header, key: header, style: TYPES[i] === 'datetime' ? { numFmt: FORMAT } : {} }))
      for (let i = 0; i < n; i++) sheet.addRow(typed(row(i)))
      await Bun.write(file, await workbook.xlsx.writeBuffer())
    },
  },
  'exceljs (WorkbookWriter, Node streams only)': {
    how: 'stream.xlsx.WorkbookWriter, row.commit() per row: needs Node fs/stream, absent in a browser; here for reference',
    async write(n, file) {
      const ExcelJS = (await lib('exceljs')).default
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: false, useStyles: true })
      const sheet = workbook.addWorksheet('Tickets')
      sheet.columns = HEADER.map((header, i) => ({ header, key: header, style: TYPES[i] === 'datetime' ? { numFmt: FORMAT } : {} }))
      for (let i = 0; i < n; i++) {
        sheet.addRow(typed(row(i))).commit()
        if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve))
      }
      sheet.commit()
      await workbook.commit()
    },
  },
  'SheetJS xlsx 0.18.5': {
    how: 'aoa_to_sheet of all rows, XLSX.write({ type: "array", compression: true }): in memory',
    async write(n, file) {
      const XLSX = await lib('xlsx')
      const data: unknown[][] = [HEADER]
      for (let i = 0; i < n; i++) data.push(typed(row(i)))
      const sheet = XLSX.utils.aoa_to_sheet(data, { dateNF: FORMAT })
      const workbook = XLSX.utils.book_new()
      XLSX.utils.book_append_sheet(workbook, sheet, 'Tickets')
      await Bun.write(file, XLSX.write(workbook, { type: 'array', bookType: 'xlsx', compression: true }))
    },
  },
  'write-excel-file 4.1.1': {
    how: 'writeExcelFile(all rows as cell objects).toBlob() (universal build): in memory',
    async write(n, file) {
      const writeExcelFile = (await lib('write-excel-file/universal')).default
      const data: unknown[][] = [HEADER.map((value) => ({ value, fontWeight: 'bold' }))]
      for (let i = 0; i < n; i++) data.push(typed(row(i)).map((value) => (value instanceof Date ? { value, type: Date, format: FORMAT } : { value })))
      await Bun.write(file, await writeExcelFile(data, { sheet: 'Tickets' }).toBlob())
    },
  },
}
/** Our sheet XML zipped by fflate (a well-kept zip library) rather than the browser's CompressionStream. */
WRITERS['ours, zipped by fflate'] = {
  how: 'our parts (workbookParts), the sheet deflated by fflate\'s streaming ZipDeflate instead of CompressionStream',
  async write(n, file) {
    const { Zip, ZipDeflate, ZipPassThrough } = await lib('fflate')
    const sink = Bun.file(file).writer()
    let done!: () => void
    const finished = new Promise<void>((resolve) => (done = resolve))
    const zip = new Zip((error: Error | null, chunk: Uint8Array, final: boolean) => {
      if (error) throw error
      sink.write(chunk)
      if (final) done()
    })
    for (const part of workbookParts('Tickets', sheetStream(HEADER, TYPES, rows(n)))) {
      if ('bytes' in part) {
        const stored = new ZipPassThrough(part.name)
        zip.add(stored)
        stored.push(part.bytes, true)
        continue
      }
      const sheet = new ZipDeflate(part.name, { level: 6 })
      zip.add(sheet)
      const reader = part.stream.getReader()
      for (;;) {
        const { done: end, value } = await reader.read()
        if (end) break
        sheet.push(value)
      }
      sheet.push(new Uint8Array(0), true)
    }
    zip.end()
    await finished
    await sink.end()
  },
}

/** In the child: write one file, print time and peaks as JSON. */
async function child(name: string, n: number, file: string): Promise<void> {
  const status = () => readFileSync('/proc/self/status', 'utf8')
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status())![1]) * 1024
  const before = kb('VmRSS')
  let heap = 0
  let buffers = 0
  const sample = () => {
    const m = process.memoryUsage()
    heap = Math.max(heap, m.heapUsed)
    buffers = Math.max(buffers, m.heapUsed + m.arrayBuffers)
  }
  const timer = setInterval(sample, 20)
  const started = performance.now()
  await WRITERS[name]!.write(n, file)
  const seconds = (performance.now() - started) / 1000
  sample()
  clearInterval(timer)
  console.log(JSON.stringify({ seconds, rssBefore: before, rssPeak: kb('VmHWM'), heap, buffers, bytes: statSync(file).size }))
}

/** LibreOffice's reading of `file` as CSV lines (dates as formatted, numbers as numbers, text as is). */
function libreOfficeCsv(file: string, dir: string): string[] {
  const out = join(dir, 'lo')
  const run = Bun.spawnSync(['soffice', `-env:UserInstallation=file://${dir}/profile`, '--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1', '--outdir', out, file], { stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(run.stderr.toString())
  return readFileSync(join(out, file.split('/').at(-1)!.replace(/\.xlsx$/, '.csv')), 'utf8').trimEnd().split('\n')
}
const csvLine = (fields: string[]) => fields.map((f) => (/[",\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',')

if (process.argv[2] === '--child') {
  await child(process.argv[3]!, Number(process.argv[4]), process.argv[5]!)
  process.exit(0) // Bun keeps a finished CompressionStream('gzip') alive
} else {
  const sizes = (process.argv[2] ?? '100000,500000').split(',').map(Number)
  const checkRows = Number(process.argv[3] ?? 5000)
  const dir = mkdtempSync(join(tmpdir(), 'xlsx-libraries-'))
  const mb = (bytes: number) => (bytes / 1e6).toFixed(1)
  const CAP = Number(process.env.XLSX_BENCH_CAP_MB ?? 3000) * 1e6
  try {
    // Each file as LibreOffice reads it, against the rows as written.
    const expected = [csvLine(HEADER), ...Array.from({ length: checkRows }, (_, i) => csvLine(row(i)))]
    for (const name of Object.keys(WRITERS)) {
      const file = join(dir, `check-${Object.keys(WRITERS).indexOf(name)}.xlsx`)
      const run = Bun.spawnSync([process.execPath, import.meta.path, '--child', name, String(checkRows), file], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, TZ: 'UTC' } })
      if (run.exitCode !== 0) { console.log(`${name}: failed: ${run.stderr.toString().slice(0, 300)}`); continue }
      const read = libreOfficeCsv(file, dir)
      const bare = (line = '') => line.replaceAll('"', '') // LibreOffice quotes every text field; no field here holds a comma
      const wrong = expected.filter((line, i) => bare(read[i]) !== line)
      console.log(`${name}: LibreOffice reads ${read.length - 1} rows, ${wrong.length === 0 ? 'every value as written' : `${wrong.length} lines differ, first: ${JSON.stringify(read[expected.indexOf(wrong[0]!)])} for ${JSON.stringify(wrong[0])}`}`)
    }
    for (const n of sizes) {
      for (const name of Object.keys(WRITERS)) {
        const file = join(dir, `${n}.xlsx`)
        const child = Bun.spawn([process.execPath, import.meta.path, '--child', name, String(n), file], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, TZ: 'UTC' } })
        // A writer that holds everything is stopped at CAP rather than let it take the shared machine's memory.
        let capped = false
        const watch = setInterval(() => {
          const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
          if (rss > CAP) { capped = true; child.kill() }
        }, 100)
        const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
        clearInterval(watch)
        if (capped) { console.log(`${n} rows, ${name}: stopped at ${mb(CAP)} MB of RSS`); continue }
        if (child.exitCode !== 0) { console.log(`${n} rows, ${name}: failed (${child.signalCode ?? child.exitCode}): ${err.trim().split('\n').at(-1)}`); continue }
        const r = JSON.parse(out.trim().split('\n').at(-1)!)
        console.log(`${n} rows, ${name}: ${r.seconds.toFixed(2)} s, peak RSS ${mb(r.rssPeak)} MB (${mb(r.rssPeak - r.rssBefore)} MB over the start), JS heap ${mb(r.heap)} MB (${mb(r.buffers)} MB with ArrayBuffers), file ${mb(r.bytes)} MB`)
        rmSync(file, { force: true })
      }
    }
    console.log(Object.entries(WRITERS).map(([name, w]) => `- ${name}: ${w.how}`).join('\n'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
