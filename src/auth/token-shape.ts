import { isTokenSecret, TOKEN_LENGTH, TOKEN_PREFIX } from './token.ts'

/**
 * What counts as token-shaped wherever text leaves the service in a log line or a header: the
 * prefix `svc_` in any case, then one or more of the token's base62 characters. Looser than a
 * valid token (src/auth/token.ts) on purpose: a truncated or mistyped token is still a secret.
 */
const TOKEN_SHAPED = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9]+`, 'gi')
const HAS_TOKEN_SHAPE = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9]`, 'i')
/** What a token-shaped run becomes. */
export const REDACTED_TOKEN = `${TOKEN_PREFIX}[redacted]`

/**
 * Percent-escapes of ASCII characters decoded, repeatedly (`%255F` → `%5F` → `_`), so that
 * `svc%5F…` or `%73vc_…` are seen for what they are. Only ASCII: a token is ASCII, and other
 * escapes (parts of UTF-8 sequences) are left as they are, so this never throws.
 */
function decodeAsciiEscapes(text: string): string {
  for (let round = 0; round < 4 && text.includes('%'); round++) {
    const decoded = text.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    if (decoded === text) break
    text = decoded
  }
  return text
}

/** Length of a token's secret part (random characters and checksum), found with or without its prefix. */
const SECRET_LENGTH = TOKEN_LENGTH - TOKEN_PREFIX.length
/** A run of base62 characters long enough to hold a secret part. */
const LONG_RUN = new RegExp(`[A-Za-z0-9]{${SECRET_LENGTH},}`, 'g')
/** What a secret part found without `svc_` before it becomes (the text before it stays: `svc-[redacted]`). */
const REDACTED_SECRET = '[redacted]'

/**
 * A run of base62 characters that is a secret part: exactly 38 characters (cut off by anything
 * else: `svc-…`, `svc__…`, a bare one), or `svc` glued to one. A secret inside a longer run is
 * not looked for: every offset of every long run (a cursor, a hash) would cost a CRC each, on
 * every log line that holds one.
 */
function secretOffset(run: string): number | undefined {
  if (run.length === SECRET_LENGTH) return isTokenSecret(run) ? 0 : undefined
  const glued = TOKEN_PREFIX.length - 1
  if (run.length === SECRET_LENGTH + glued && /^svc/i.test(run) && isTokenSecret(run.slice(glued))) return glued
  return undefined
}

function redactSecretRun(run: string): string {
  const at = secretOffset(run)
  return at === undefined ? run : run.slice(0, at) + REDACTED_SECRET
}

/**
 * A run of the sizes secretOffset looks at, with something else on both sides. Written so that
 * the regular-expression engine scans a log line in well under a microsecond (no look-behind,
 * no alternation): this runs on every access line.
 */
const SECRET_SIZED_RUN = new RegExp(`[^A-Za-z0-9][A-Za-z0-9]{${SECRET_LENGTH}}[^A-Za-z0-9]`)
const GLUED_SECRET_SIZED_RUN = new RegExp(`svc[A-Za-z0-9]{${SECRET_LENGTH}}`, 'i')

/**
 * Cheap test of a JSON log line (whose text never starts or ends with a base62 character): false
 * when it cannot hold a secret part without `svc_` before it.
 */
export function lineMayHoldSecret(line: string): boolean {
  return SECRET_SIZED_RUN.test(line) || GLUED_SECRET_SIZED_RUN.test(line)
}

/** True when `text` holds a token's secret part without `svc_` before it (see secretOffset). */
export function containsSecret(text: string): boolean {
  if (!lineMayHoldSecret(` ${text} `)) return false
  for (const [run] of text.matchAll(LONG_RUN)) if (secretOffset(run) !== undefined) return true
  return false
}

/**
 * True when `text`, percent-decoded, holds something token-shaped: `svc_` and base62 characters,
 * or a token's secret part (checksum and all) with any prefix or none.
 */
export function containsTokenShape(text: string): boolean {
  if (HAS_TOKEN_SHAPE.test(text) || containsSecret(text)) return true
  if (!text.includes('%')) return false
  const decoded = decodeAsciiEscapes(text)
  return HAS_TOKEN_SHAPE.test(decoded) || containsSecret(decoded)
}

/**
 * `text` unchanged when it holds nothing token-shaped, even percent-decoded; otherwise its
 * percent-decoded form with every token-shaped run replaced by `svc_[redacted]`, and every
 * secret part found without `svc_` by `[redacted]` (an escaped
 * token cannot be cut out of the escaped text reliably, so the decoded text is what is shown).
 */
export function redactTokens(text: string): string {
  if (!containsTokenShape(text)) return text
  return decodeAsciiEscapes(text).replace(TOKEN_SHAPED, REDACTED_TOKEN).replace(LONG_RUN, redactSecretRun)
}
