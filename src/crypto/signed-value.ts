import { timingSafeEqual } from 'node:crypto'

/**
 * The opaque values the API hands out and takes back (pagination cursors, changes tokens):
 * `base64url(JSON payload) . base64url(signature)`, the signature an HMAC-SHA256 under the
 * control store's signing key, cut to 128 bits. Each kind signs a text of its own that starts
 * with its own tag (`signedText`), so a value of one kind never passes as another, and a kind
 * may bind more than the payload (a cursor binds its query).
 *
 * `decode` checks, in this order and before anything else is decoded: the length cap, the two
 * base64url parts, the signature; only then is the payload parsed.
 */
export interface SignedValueKind {
  /** Longer than any value of this kind the codec makes; anything longer is refused unread. */
  maxLength: number
  /** The text the signature covers, for a payload (its base64url form). */
  signedText(payload: string): string
}

export type Decoded = { ok: true; fields: unknown } | { ok: false; problem: 'malformed' | 'altered' }

const BASE64URL = /^[A-Za-z0-9_-]+$/

export class SignedValueCodec {
  constructor(private readonly signingKey: string) {}

  encode(kind: SignedValueKind, fields: unknown): string {
    const payload = Buffer.from(JSON.stringify(fields)).toString('base64url')
    return `${payload}.${this.signatureOf(kind.signedText(payload))}`
  }

  /** The fields of a value of `kind`, or why it is none: malformed (not of our shape) or altered (the signature fails). */
  decode(kind: SignedValueKind, value: string): Decoded {
    if (value.length > kind.maxLength) return { ok: false, problem: 'malformed' }
    const parts = value.split('.')
    if (parts.length !== 2 || !parts.every((part) => BASE64URL.test(part))) return { ok: false, problem: 'malformed' }
    const [payload, signature] = parts as [string, string]
    if (!sameSignature(signature, this.signatureOf(kind.signedText(payload)))) return { ok: false, problem: 'altered' }
    try {
      return { ok: true, fields: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown }
    } catch {
      // Signed by us yet not JSON: cannot come from this codec, so it is as good as malformed.
      return { ok: false, problem: 'malformed' }
    }
  }

  private signatureOf(text: string): string {
    return new Bun.CryptoHasher('sha256', this.signingKey).update(text).digest().subarray(0, 16).toString('base64url')
  }
}

/** Compares a given signature with the expected one in constant time. */
function sameSignature(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}
