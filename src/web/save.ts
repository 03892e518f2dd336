// Saving an export to disk. The server is asked first and the Save dialog opens only once it has
// answered 200, with the server's file name: an analyst never picks a place for a file that a 401
// or a 429 then refuses. Where the browser has the File System Access API (Chrome, Edge) the
// rows stream to the chosen file; elsewhere they are assembled in memory and saved as a Blob.

const CSV_TYPES: { description: string; accept: Record<string, string[]> }[] = [{ description: 'CSV file', accept: { 'text/csv': ['.csv'] } }]
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const XLSX_TYPES = [{ description: 'Excel workbook', accept: { [XLSX_TYPE]: ['.xlsx'] } }]
const isWorkbook = (name: string) => name.endsWith('.xlsx')

/** The part of the File System Access API the page uses; Chromium's alone, so not in TypeScript's DOM types. */
interface SaveFilePicker {
  showSaveFilePicker?: (options: { suggestedName: string; types: typeof CSV_TYPES }) => Promise<SavedFileHandle>
}
/** FileSystemHandle.remove() is Chromium's (since 110): a browser may lack it. */
type SavedFileHandle = FileSystemFileHandle & { remove?: () => Promise<void> }

const pickerWindow = window as Window & SaveFilePicker

/** A problem of the save itself, explained in the page's words (`kind` 'info' for a choice the analyst made). */
export class SaveProblem extends Error {
  constructor(
    message: string,
    readonly kind: 'error' | 'info' = 'error',
  ) {
    super(message)
  }
}

/** A failure after the Save dialog: `leftover` names the empty file that could not be removed, if any. */
export class SaveFailed extends Error {
  constructor(
    cause: unknown,
    readonly leftover: string | null,
  ) {
    super(String((cause as Error | undefined)?.message ?? cause), { cause })
  }
}

/** An export whose headers are in: its body and the server's file name. */
export interface StartedExport {
  body: ReadableStream<Uint8Array>
  name: string
}

export interface SaveCounts {
  rows: number
  bytes: number
}

export interface SaveOptions {
  /** Resolves on a fresh click, when the Save dialog may no longer open by itself. */
  askForClick: () => Promise<void>
  onProgress: (counts: SaveCounts) => void
  signal: AbortSignal
  /** The rows so far, when the bytes saved are not the CSV's lines (an .xlsx made from it); else its lines are counted. */
  rows?: () => number
}

/** Line ends in `chunk`: indexOf, not a loop over the bytes (ten times faster on 100 MB in Chromium). */
export function lineEnds(chunk: Uint8Array): number {
  let count = 0
  for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) count++
  return count
}

/** What was saved: `savedAs` is the name actually chosen in the dialog. */
export interface Saved extends SaveCounts {
  savedAs: string
  picked: boolean
}

export function canPickFile(): boolean {
  return typeof pickerWindow.showSaveFilePicker === 'function'
}

/**
 * Reads `body` to its end, handing each chunk to `sink` and the running counts to `onProgress`.
 * A Cancel counts even when the last bytes had already arrived: the file is then not kept.
 */
async function pump(
  body: ReadableStream<Uint8Array>,
  sink: (chunk: Uint8Array) => unknown,
  { onProgress, signal, rows }: SaveOptions,
): Promise<SaveCounts> {
  const reader = body.getReader()
  let bytes = 0
  let newlines = 0
  // Every record ends with CRLF; the first one is the header row.
  const rowsSoFar = rows ?? (() => Math.max(0, newlines - 1))
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      bytes += value.byteLength
      if (!rows) newlines += lineEnds(value)
      await sink(value)
      signal.throwIfAborted()
      onProgress({ rows: rowsSoFar(), bytes })
    }
    signal.throwIfAborted()
  } catch (error) {
    // Tell the server at once that nobody reads any more, so it releases the export's statement.
    await reader.cancel().catch(() => undefined)
    throw error
  }
  return { rows: rowsSoFar(), bytes }
}

/**
 * Opens the Save dialog. Chrome allows it only shortly after the click that started the
 * download (transient activation, about 5 s); when the server took longer, `askForClick` waits
 * for a fresh click before the dialog opens.
 */
async function pickFile(name: string, askForClick: () => Promise<void>): Promise<SavedFileHandle> {
  const show = pickerWindow.showSaveFilePicker!
  const options = { suggestedName: name, types: isWorkbook(name) ? XLSX_TYPES : CSV_TYPES }
  if (navigator.userActivation && !navigator.userActivation.isActive) await askForClick()
  try {
    return await show(options)
  } catch (error) {
    const name = (error as Error | undefined)?.name
    if (name !== 'SecurityError' && name !== 'NotAllowedError') throw error
    await askForClick()
    return show(options)
  }
}

async function saveWithPicker(exported: StartedExport, options: SaveOptions): Promise<Saved> {
  const { askForClick } = options
  let handle: SavedFileHandle
  try {
    handle = await pickFile(exported.name, askForClick)
  } catch (error) {
    await exported.body.cancel().catch(() => undefined)
    if ((error as Error | undefined)?.name === 'AbortError') throw new SaveProblem('Nothing was saved: the Save dialog was closed.', 'info')
    throw error
  }
  // The dialog has already created the chosen file, empty: from here on a failure removes it.
  let writable: FileSystemWritableFileStream | null = null
  try {
    const opened = await handle.createWritable()
    writable = opened
    const write = (chunk: Uint8Array) =>
      opened.write(chunk as Uint8Array<ArrayBuffer>).catch((error: unknown) => {
        throw new SaveProblem(`The file could not be written: ${(error as Error | undefined)?.message ?? error}`)
      })
    const counts = await pump(exported.body, write, options)
    await opened.close()
    return { ...counts, savedAs: handle.name, picked: true }
  } catch (error) {
    await writable?.abort().catch(() => undefined)
    await exported.body.cancel().catch(() => undefined)
    const removed = typeof handle.remove === 'function' && (await handle.remove().then(() => true, () => false))
    throw new SaveFailed(error, removed ? null : handle.name)
  }
}

async function saveAsBlob(exported: StartedExport, options: SaveOptions): Promise<Saved> {
  const chunks: Uint8Array<ArrayBuffer>[] = []
  let counts: SaveCounts
  try {
    counts = await pump(exported.body, (chunk) => chunks.push(chunk as Uint8Array<ArrayBuffer>), options)
  } catch (error) {
    throw new SaveFailed(error, null) // nothing was handed to the browser's downloads yet
  }
  const url = URL.createObjectURL(new Blob(chunks, { type: isWorkbook(exported.name) ? XLSX_TYPE : 'text/csv' }))
  const link = Object.assign(document.createElement('a'), { href: url, download: exported.name })
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
  return { ...counts, savedAs: exported.name, picked: false }
}

/** Saves an export whose headers are in (see startExport). */
export function saveExport(exported: StartedExport, options: SaveOptions): Promise<Saved> {
  return canPickFile() ? saveWithPicker(exported, options) : saveAsBlob(exported, options)
}
