import { parseArgs, type ParseArgsConfig } from 'node:util'

/** A mistake in how the CLI was called: one line on stderr, exit status 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>

/** The one positional argument a command takes, and what to say when it is missing. */
export interface Positional {
  /** Said when the argument is missing; it tells the operator where to find the value. */
  missing: string
}

/**
 * A value that looks like a negative number (`--per-day -5`) is a value, not an option: no
 * option of this CLI starts with a digit. parseArgs would call it "ambiguous"; written as
 * `--per-day=-5` it reaches the option's own range check, whose message says what is allowed.
 */
function joinNegativeValues(args: string[], options: Options): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const next = args[i + 1]
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`)
      i++
    } else out.push(arg)
  }
  return out
}

/** parseArgs's errors, said as what the operator should do; `help` names the command that lists the options. */
function explainParseError(error: unknown, help: string): string {
  const { code, message } = error as { code?: string; message: string }
  const option = /'(-[^' ]*)/.exec(message)?.[1]
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option "${option}" (${help})`
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return message.includes('does not take')
        ? `${option} takes no value`
        : `${option} needs a value (write ${option}=<value> for a value that starts with a dash)`
    default:
      return message.split('\n')[0]!
  }
}

/**
 * node:util parseArgs in strict mode, its errors turned into one-line usage errors; the one
 * option parser of both command-line programs (`admin` and `sync`). A command takes no
 * positional argument, or exactly one (`positional`). `help` ends the message for an unknown
 * option: where the options are listed.
 */
export function parseOptions<T extends Options>(args: string[], options: T, positional?: Positional, help = 'admin --help lists the options of each command') {
  let parsed
  try {
    parsed = parseArgs({ args: joinNegativeValues(args, options), options, strict: true, allowPositionals: true })
  } catch (error) {
    throw new UsageError(explainParseError(error, help))
  }
  const expected = positional ? 1 : 0
  if (parsed.positionals.length > expected) throw new UsageError(`unexpected argument "${parsed.positionals[expected]}"`)
  if (parsed.positionals.length < expected) throw new UsageError(positional!.missing)
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
