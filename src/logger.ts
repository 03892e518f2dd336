import type { LogLevel } from './config/config.ts'
import { lineMayHoldSecret, redactTokens } from './auth/token-shape.ts'

/**
 * Structured logger: one JSON object per line. Never give it a token, a hash or a file path; a
 * token that reaches it anyway, in any field, percent-encoded or not, is redacted (below).
 */
export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void
  info(event: string, fields?: Record<string, unknown>): void
  warn(event: string, fields?: Record<string, unknown>): void
  error(event: string, fields?: Record<string, unknown>): void
}

/** Anything that could be a token, or an escaped one: `svc_` in any case, or any percent-escape. */
const MAY_HOLD_TOKEN = /svc_|%/i

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

/**
 * A logger writing JSON lines to `write` at `level` and above; `every` are fields of every line,
 * before the event (a worker's index, so that each line says which process wrote it).
 */
export function createLogger(level: LogLevel, write: (line: string, level: LogLevel) => void, every: Record<string, unknown> = {}): Logger {
  const threshold = RANK[level]
  // One ISO time per millisecond: a busy server writes several lines in each.
  let timeMs = NaN
  let time = ''
  const emit = (lvl: LogLevel) => (event: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < threshold) return
    const now = Date.now()
    if (now !== timeMs) time = new Date((timeMs = now)).toISOString()
    const record = { time, level: lvl, ...every, event, ...fields }
    let line = JSON.stringify(record)
    // Text a client chose (a path, a query, a header, an error message quoting them) can hold a
    // token, or its secret part after another prefix or none. Checking the finished line is cheap;
    // only a line that may hold one is written again with every string field redacted
    // (auth/token-shape.ts), after percent-decoding.
    if (MAY_HOLD_TOKEN.test(line) || lineMayHoldSecret(line)) line = JSON.stringify(record, (_key, value: unknown) => (typeof value === 'string' ? redactTokens(value) : value))
    write(line + '\n', lvl)
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

/** How long a line may wait in the sink, and how much may wait, before it is written. */
export const LOG_BATCH_MS = 50
export const LOG_BATCH_BYTES = 64 * 1024

export interface LogSink {
  write(line: string, level: LogLevel): void
  /** Writes whatever waits, at once (a clean stop calls it last; so does the process's exit). */
  flush(): void
}

/**
 * Writes to stdout (or `out`) in batches: the lines of up to LOG_BATCH_MS, or LOG_BATCH_BYTES,
 * go out in one write, off the requests' path, instead of a write (and, behind the supervisor, a
 * wake-up of its relay) per line or per turn of the event loop. A clean stop loses nothing (the
 * shutdown and the process's exit flush); a process killed outright (kill -9) loses at most the
 * lines of its last LOG_BATCH_MS. Errors are written at once, with what waits before them, so
 * that what explains a crash is not left in a buffer.
 */
export function stdoutSink(
  out: (text: string) => void = (text) => void process.stdout.write(text),
  schedule: (flush: () => void, ms: number) => void = (flush, ms) => setTimeout(flush, ms).unref(),
): LogSink {
  let pending = ''
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === '') return
    const text = pending
    pending = ''
    out(text)
  }
  process.on('exit', flush)
  return {
    write(line, level) {
      pending += line
      if (level === 'error' || pending.length >= LOG_BATCH_BYTES) return flush()
      if (!scheduled) {
        scheduled = true
        schedule(flush, LOG_BATCH_MS)
      }
    },
    flush,
  }
}

/** A logger that keeps its lines in memory; for tests that grep what was logged. */
export function memoryLogger(level: LogLevel = 'debug'): Logger & { lines: string[] } {
  const lines: string[] = []
  return Object.assign(createLogger(level, (line) => lines.push(line)), { lines })
}
