import type { LogLevel } from './config/config.ts'

/** Structured logger: one JSON object per line. Never give it a token, a hash or a file path. */
export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void
  info(event: string, fields?: Record<string, unknown>): void
  warn(event: string, fields?: Record<string, unknown>): void
  error(event: string, fields?: Record<string, unknown>): void
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

/** A logger writing JSON lines to `write` (stdout by default) at `level` and above. */
export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const threshold = RANK[level]
  const emit = (lvl: LogLevel) => (event: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < threshold) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, event, ...fields }) + '\n')
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

/** A logger that keeps its lines in memory; for tests that grep what was logged. */
export function memoryLogger(level: LogLevel = 'debug'): Logger & { lines: string[] } {
  const lines: string[] = []
  return Object.assign(createLogger(level, (line) => lines.push(line)), { lines })
}
