import { sameSignature, signatureOf } from '../crypto/signature.ts'
import { invalidParam } from '../errors/api-error.ts'

/** A position in one tenant file's stream of changes: its history and a version in it. */
export interface ChangesPosition {
  historyId: string
  version: number
}

/** Longer than any token this codec makes (an organisation id is at most 64 characters). */
const MAX_TOKEN_LENGTH = 512
const BASE64URL = /^[A-Za-z0-9_-]+$/

/**
 * Changes tokens (the X-Changes-Token header, taken back as `changedAfter`):
 * `base64url(JSON [organisationId, historyId, version]) . base64url(HMAC)`, signed as cursors
 * are. The organisation and the history travel inside the signed payload, not only in the
 * signature, so that each way a token can be wrong gets its own answer: a token that does not
 * parse (malformed), one whose signature fails (altered), and a genuine one of another
 * organisation. Its history is checked against the file by `readChangeWindow`.
 */
export class ChangesTokenCodec {
  constructor(private readonly signingKey: string) {}

  encode(organisationId: string, position: ChangesPosition): string {
    const payload = Buffer.from(JSON.stringify([organisationId, position.historyId, position.version])).toString('base64url')
    return `${payload}.${this.sign(payload)}`
  }

  /** The position a token carries; throws 400 `param: changedAfter` unless it is one of this organisation's. */
  decode(organisationId: string, token: string): ChangesPosition {
    const parts = token.split('.')
    if (token.length > MAX_TOKEN_LENGTH || parts.length !== 2 || !parts.every((part) => BASE64URL.test(part))) throw malformed()
    const [payload, signature] = parts as [string, string]
    if (!sameSignature(signature, this.sign(payload))) throw altered()
    const fields = parsePayload(payload)
    // Signed by us yet not our shape: cannot come from this codec, so it is as good as malformed.
    if (!fields) throw malformed()
    if (fields[0] !== organisationId) throw otherOrganisation()
    return { historyId: fields[1], version: fields[2] }
  }

  private sign(payload: string): string {
    return signatureOf(this.signingKey, JSON.stringify(['changes', 1, payload]))
  }
}

function parsePayload(payload: string): [string, string, number] | null {
  try {
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown
    if (
      Array.isArray(fields) && fields.length === 3 && typeof fields[0] === 'string' && typeof fields[1] === 'string' &&
      Number.isSafeInteger(fields[2]) && fields[2] >= 0
    ) {
      return fields as [string, string, number]
    }
  } catch {
    // not JSON
  }
  return null
}

function malformed() {
  return invalidParam(
    'changedAfter',
    `Parameter 'changedAfter' is not a changes token; pass the X-Changes-Token header of an earlier response as it came (URL-encoded), or load the range without changedAfter.`,
  )
}

function altered() {
  return invalidParam(
    'changedAfter',
    `Parameter 'changedAfter' does not carry this service's signature (it was altered or cut short, or is not an X-Changes-Token); pass the header's value unchanged, or load the range again without changedAfter.`,
  )
}

function otherOrganisation() {
  return invalidParam(
    'changedAfter',
    `Parameter 'changedAfter' was issued to another organisation; keep one token per organisation and pass the one this organisation's responses carried, or load the range again without changedAfter.`,
  )
}
