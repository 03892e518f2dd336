/**
 * API token format (docs/api.md#token-format): `svc_` + 32 random base62 characters (≥ 190 bits from a
 * CSPRNG) + 6 base62 characters holding the CRC32 of everything before them. The checksum lets
 * a mistyped or truncated token be refused without a database look-up, as GitHub's tokens do.
 */

export const TOKEN_PREFIX = 'svc_'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const RANDOM_LENGTH = 32
const CHECKSUM_LENGTH = 6
export const TOKEN_LENGTH = TOKEN_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH
const TOKEN_SHAPE = /^svc_[A-Za-z0-9]{38}$/

/** `length` base62 characters from the CSPRNG, without modulo bias (rejection sampling). */
export function randomBase62(length: number): string {
  let out = ''
  const bytes = new Uint8Array(length * 2)
  while (out.length < length) {
    crypto.getRandomValues(bytes)
    for (const byte of bytes) {
      if (byte < 248) out += BASE62[byte % 62] // 248 = 4 × 62: larger bytes would bias the choice
      if (out.length === length) break
    }
  }
  return out
}

function checksum(body: string): string {
  let value = Bun.hash.crc32(body)
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out
    value = Math.floor(value / 62)
  }
  return out
}

/** A new token. It is shown to its owner once and never stored. */
export function generateToken(): string {
  const body = TOKEN_PREFIX + randomBase62(RANDOM_LENGTH)
  return body + checksum(body)
}

/** True when the token has the right shape and its checksum matches. */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_SHAPE.test(token)) return false
  const body = token.slice(0, TOKEN_LENGTH - CHECKSUM_LENGTH)
  return checksum(body) === token.slice(TOKEN_LENGTH - CHECKSUM_LENGTH)
}

/**
 * True when `text` (38 characters) is a token's secret part: its random characters and their
 * checksum, which covers the prefix. Found so without the prefix, or after a mistyped one
 * (`svc-`, `svc__`): a chance of one in 62^6 for text that is no token's.
 */
export function isTokenSecret(text: string): boolean {
  return text.length === RANDOM_LENGTH + CHECKSUM_LENGTH && checksum(TOKEN_PREFIX + text.slice(0, RANDOM_LENGTH)) === text.slice(RANDOM_LENGTH)
}

/** SHA-256 of the whole token, hex: the only form a token is stored in. */
export function hashToken(token: string): string {
  return new Bun.CryptoHasher('sha256').update(token).digest('hex')
}

/** The part of a token an operator may see in a list (`svc_` and 4 characters). */
export function displayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 4)
}
