import { ApiError } from '../errors/api-error.ts'
import { hashToken, isWellFormedToken } from './token.ts'

/** What the auth step needs to know about a presented token, in one look-up by its hash. */
export interface TokenLookup {
  tokenId: string
  organisationId: string
  revoked: boolean
  plan: 'demo' | 'paid'
  apiEnabled: boolean
}

/** Finds a token by the SHA-256 of its whole text (revoked or not); the control store is one. */
export type LookupToken = (tokenHash: string) => TokenLookup | undefined

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i

function unauthorized(message: string, tokenGiven: boolean): ApiError {
  const challenge = tokenGiven ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"'
  return new ApiError('unauthorized', message, {}, { 'WWW-Authenticate': challenge })
}

/**
 * Step 1 of the checks (docs/api.md#authentication; step 2, the API feature, is the gate's): the
 * token from `Authorization: Bearer <token>` only, its checksum checked offline, then one look-up
 * by SHA-256 hash (revocation therefore counts on the very next request). Unknown and revoked
 * tokens cost the same work: hash, one look-up, a branch.
 */
export function authenticate(authorization: string | null, lookupToken: LookupToken): TokenLookup {
  if (authorization === null || authorization.trim() === '') {
    throw unauthorized('The Authorization header is missing; send Authorization: Bearer <API token>.', false)
  }
  const match = BEARER.exec(authorization)
  if (!match) throw unauthorized('The Authorization header must use the Bearer scheme: Authorization: Bearer <API token>.', false)
  const token = match[1]!
  if (!isWellFormedToken(token)) throw unauthorized('The API token is malformed; copy it again from the administration application.', true)
  const found = lookupToken(hashToken(token))
  if (!found || found.revoked) throw unauthorized('The API token is unknown or has been revoked.', true)
  return found
}
