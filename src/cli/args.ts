import { parseArgs, type ParseArgsConfig } from 'node:util'

/** A mistake in how the CLI was called: one line on stderr, exit status 2. */
export class UsageError extends Error {}

/** node:util parseArgs in strict mode, its errors turned into one-line usage errors. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, positionals = 0) {
  let parsed
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals > 0 })
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!)
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(positionals === 0 ? `unexpected argument "${parsed.positionals[0]}"` : `expected ${positionals} argument(s)`)
  }
  return parsed
}

export function requireOption(value: string | undefined, name: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`)
  return value
}

/** A whole number option within bounds. */
export function integerOption(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`)
  return Number(value)
}
