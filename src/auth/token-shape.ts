import { TOKEN_PREFIX } from './token.ts'

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

/** True when `text`, percent-decoded, holds something token-shaped. */
export function containsTokenShape(text: string): boolean {
  return HAS_TOKEN_SHAPE.test(text) || (text.includes('%') && HAS_TOKEN_SHAPE.test(decodeAsciiEscapes(text)))
}

/**
 * `text` unchanged when it holds nothing token-shaped, even percent-decoded; otherwise its
 * percent-decoded form with every token-shaped run replaced by `svc_[redacted]` (an escaped
 * token cannot be cut out of the escaped text reliably, so the decoded text is what is shown).
 */
export function redactTokens(text: string): string {
  if (!containsTokenShape(text)) return text
  return decodeAsciiEscapes(text).replace(TOKEN_SHAPED, REDACTED_TOKEN)
}
