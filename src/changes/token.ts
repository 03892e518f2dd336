import { SignedValueCodec, type SignedValueKind } from '../crypto/signed-value.ts'
import { CHANGES_FLOOR_HEADER, type ChangedAfterRefusal } from '../contract/vocabulary.ts'
import { ApiError } from '../errors/api-error.ts'

/** A position in one tenant file's stream of changes: its history and a version in it. */
export interface ChangesPosition {
  historyId: string
  version: number
}

const CHANGES_TOKEN: SignedValueKind = {
  // Longer than any token made here: an organisation id is at most 64 characters, a history id 32.
  maxLength: 512,
  signedText: (payload) => JSON.stringify(['changes', 1, payload]),
}

/**
 * Changes tokens (the X-Changes-Token header, taken back as `changedAfter`):
 * `base64url(JSON [organisationId, historyId, version]) . base64url(HMAC)`, a signed value
 * (crypto/signed-value.ts). The organisation and history travel inside the payload, so that
 * each way a token can be wrong gets its own answer: malformed, altered, or a genuine one of
 * another organisation. Its history is checked against the file by `readChangeWindow`.
 */
export class ChangesTokenCodec {
  private readonly codec: SignedValueCodec
  private readonly lastEncoded = new Map<string, ChangesPosition & { token: string }>()

  constructor(signingKey: string) {
    this.codec = new SignedValueCodec(signingKey)
  }

  encode(organisationId: string, position: ChangesPosition): string {
    // Every page of a file that has not changed carries the same token: signed once per change
    // of the file, not once per request. One entry per organisation served.
    const last = this.lastEncoded.get(organisationId)
    if (last && last.historyId === position.historyId && last.version === position.version) return last.token
    const token = this.codec.encode(CHANGES_TOKEN, [organisationId, position.historyId, position.version])
    this.lastEncoded.set(organisationId, { historyId: position.historyId, version: position.version, token })
    return token
  }

  /** The position a token carries; throws 400 `param: changedAfter` unless it is one of this organisation's. */
  decode(organisationId: string, token: string): ChangesPosition {
    const decoded = this.codec.decode(CHANGES_TOKEN, token)
    if (!decoded.ok) throw decoded.problem === 'altered' ? altered() : malformed()
    // Signed by us yet not our shape: cannot come from this codec, so it is as good as malformed.
    if (!isPosition(decoded.fields)) throw malformed()
    const [tokenOrganisation, historyId, version] = decoded.fields
    if (tokenOrganisation !== organisationId) throw otherOrganisation()
    return { historyId, version }
  }
}

function isPosition(fields: unknown): fields is [string, string, number] {
  return (
    Array.isArray(fields) && fields.length === 3 && typeof fields[0] === 'string' && typeof fields[1] === 'string' &&
    Number.isSafeInteger(fields[2]) && fields[2] >= 0
  )
}

/** The 400 for a refused `changedAfter`: `param` names it, `reason` says which refusal. */
export function changedAfterRefused(reason: ChangedAfterRefusal, message: string): ApiError {
  return new ApiError('invalid_request', message, { param: 'changedAfter', reason })
}

function malformed() {
  return changedAfterRefused(
    'malformed',
    `Parameter 'changedAfter' is not a changes token; pass the X-Changes-Token header of an earlier response as it came (URL-encoded), or load the range without changedAfter.`,
  )
}

function altered() {
  return changedAfterRefused(
    'altered',
    `Parameter 'changedAfter' does not carry this service's signature (it was altered or cut short, or is not an X-Changes-Token); pass the header's value unchanged, or load the range again without changedAfter.`,
  )
}

function otherOrganisation() {
  return changedAfterRefused(
    'other_organisation',
    `Parameter 'changedAfter' was issued to another organisation; keep one token per organisation and pass the one this organisation's responses carried, or load the range again without changedAfter.`,
  )
}

/**
 * The floor a request names in X-Changes-Floor (a changes token the loader holds), or null
 * without the header; 400 when it is not one of this organisation's tokens.
 */
export function changesFloor(codec: ChangesTokenCodec, organisationId: string, request: Request): ChangesPosition | null {
  const value = request.headers.get(CHANGES_FLOOR_HEADER)
  if (value === null) return null
  try {
    return codec.decode(organisationId, value)
  } catch {
    throw new ApiError(
      'invalid_request',
      `Header ${CHANGES_FLOOR_HEADER} is not an X-Changes-Token of this organisation; send the X-Changes-Token of an earlier response unchanged, or leave the header out.`,
    )
  }
}
