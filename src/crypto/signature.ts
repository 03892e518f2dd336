import { timingSafeEqual } from 'node:crypto'

/**
 * The signature of the opaque values the API hands out and takes back (pagination cursors,
 * changes tokens): HMAC-SHA256 under the control store's signing key, cut to 128 bits, base64url.
 * Each caller signs a text that starts with its own tag, so a value of one kind never passes as
 * another.
 */
export function signatureOf(signingKey: string, text: string): string {
  return new Bun.CryptoHasher('sha256', signingKey).update(text).digest().subarray(0, 16).toString('base64url')
}

/** Compares a given signature with the expected one in constant time. */
export function sameSignature(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}
