import { ApiError } from '../errors/api-error.ts'
import type { ControlStore, TokenLookup } from '../control/store.ts'
import { hashToken, isWellFormedToken } from './token.ts'

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i

function unauthorized(message: string, tokenGiven: boolean): ApiError {
  const challenge = tokenGiven ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"'
  return new ApiError('unauthorized', message, {}, { 'WWW-Authenticate': challenge })
}

/**
 * Step 1 of decisions.md §5 (step 2, the API feature, is the gate's): the token from `Authorization: Bearer <token>` only, its
 * checksum checked offline, then one look-up by SHA-256 hash (revocation therefore counts on the
 * very next request). Unknown and revoked tokens cost the same work: hash, one query, a branch.
 */
export function authenticate(authorization: string | null, store: ControlStore): TokenLookup {
  if (authorization === null || authorization.trim() === '') {
    throw unauthorized('The Authorization header is missing; send Authorization: Bearer <API token>.', false)
  }
  const match = BEARER.exec(authorization)
  if (!match) throw unauthorized('The Authorization header must use the Bearer scheme: Authorization: Bearer <API token>.', false)
  const token = match[1]!
  if (!isWellFormedToken(token)) throw unauthorized('The API token is malformed; copy it again from the administration application.', true)
  const found = store.lookupToken(hashToken(token))
  if (!found || found.revoked) throw unauthorized('The API token is unknown or has been revoked.', true)
  return found
}

/**
 * Batches `last used` times in memory and writes them in one short transaction every few
 * seconds, so that a request never waits on a write of the control store for it.
 */
export class LastUsedRecorder {
  /** Token id → epoch ms of its latest use; formatted only when written. */
  private pending = new Map<string, number>()
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly store: ControlStore,
    private readonly onError: (error: unknown) => void,
    flushEveryMs = 10_000,
  ) {
    this.timer = setInterval(() => this.flush(), flushEveryMs)
    this.timer.unref()
  }

  note(tokenId: string, at: number): void {
    this.pending.set(tokenId, at)
  }

  flush(): void {
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    try {
      this.store.recordTokenUse(new Map([...batch].map(([id, at]) => [id, new Date(at).toISOString()])))
    } catch (error) {
      // Busy or read-only: keep the newest times for the next attempt.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at)
      this.onError(error)
    }
  }

  stop(): void {
    clearInterval(this.timer)
    this.flush()
  }
}
