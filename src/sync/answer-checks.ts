/**
 * What a window's export must be before any of it is kept (docs/loading.md#what-sync-checks):
 * every row's ids free of control characters (a NUL or an escape sequence in an id is no id
 * the service makes, and would reach every BI tool that shows it), and every row created
 * inside the window asked for (a row outside it would be kept in a window it does not belong
 * to, and a reconcile of its own window would not see it). The bytes pass through unchanged;
 * the first row that fails errors the stream, so the target's transaction keeps nothing of it.
 */

/** The server's answer broke a rule no answer of the API breaks: the run ends (exit 1), the window not kept. */
export class AnswerRefusedError extends Error {}

/** Columns whose values are identifiers. */
const ID_COLUMNS = ['id', 'queueId', 'locationId', 'calledByDeviceSessionId']

export interface CheckedAnswer {
  stream: ReadableStream<Uint8Array>
  /** The refusal, once a row has failed (the target may report it in its own words). */
  refusal(): AnswerRefusedError | undefined
}

const QUOTE = 0x22
const COMMA = 0x2c
const LF = 0x0a
const CR = 0x0d

export function checkAnswer(source: ReadableStream<Uint8Array>, window: { fromMs: number; toMs: number }): CheckedAnswer {
  const fromIso = new Date(window.fromMs).toISOString()
  const toIso = new Date(window.toMs).toISOString()
  let refused: AnswerRefusedError | undefined
  // The CSV's state across chunks: inside quotes, after a quote (a doubled one or the end), the field's index and bytes.
  let inQuotes = false
  let afterQuote = false
  let field = 0
  let bytes: number[] = []
  let row = 0
  let header: string[] = []
  let idFields = new Set<number>()
  let createdAtField = -1
  let values = new Map<number, string>()
  const decoder = new TextDecoder()

  const endField = () => {
    if (row === 0) header.push(decoder.decode(new Uint8Array(bytes)))
    else if (field === createdAtField || idFields.has(field)) values.set(field, decoder.decode(new Uint8Array(bytes)))
    bytes = []
    field++
  }
  const endRow = () => {
    endField()
    if (row === 0) {
      idFields = new Set(ID_COLUMNS.map((name) => header.indexOf(name)).filter((index) => index >= 0))
      createdAtField = header.indexOf('createdAt')
    } else if (field > 1 || values.size > 0) {
      checkRow()
    }
    row++
    field = 0
    values = new Map()
  }
  const checkRow = () => {
    for (const index of idFields) {
      const value = values.get(index) ?? ''
      if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
        throw new AnswerRefusedError(`row ${row} of the export has a control character in its ${header[index]} (${JSON.stringify(value)}), which no id of this API holds`)
      }
    }
    const createdAt = values.get(createdAtField) ?? ''
    const inWindow = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(createdAt) ? createdAt >= fromIso && createdAt < toIso : Date.parse(createdAt) >= window.fromMs && Date.parse(createdAt) < window.toMs
    if (!inWindow) throw new AnswerRefusedError(`row ${row} of the export (id ${JSON.stringify(values.get(header.indexOf('id')) ?? '')}) was created at ${JSON.stringify(createdAt)}, outside the window asked for, ${fromIso} to ${toIso}`)
  }
  const keeps = (index: number) => row === 0 || index === createdAtField || idFields.has(index)

  const stream = source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        try {
          for (let i = 0; i < chunk.length; i++) {
            const byte = chunk[i]!
            if (inQuotes) {
              if (byte === QUOTE) {
                inQuotes = false
                afterQuote = true
              } else if (keeps(field)) bytes.push(byte)
              continue
            }
            if (byte === QUOTE) {
              // A quote right after a closing one is a doubled quote: a quote in the value.
              if (afterQuote && keeps(field)) bytes.push(QUOTE)
              inQuotes = true
              afterQuote = false
              continue
            }
            afterQuote = false
            if (byte === COMMA) endField()
            else if (byte === LF) endRow()
            else if (byte !== CR && keeps(field)) bytes.push(byte)
          }
        } catch (error) {
          refused = error as AnswerRefusedError
          throw error
        }
        controller.enqueue(chunk)
      },
      flush() {
        try {
          if (field > 0 || bytes.length > 0) endRow()
        } catch (error) {
          refused = error as AnswerRefusedError
          throw error
        }
      },
    }),
  )
  return { stream, refusal: () => refused }
}
