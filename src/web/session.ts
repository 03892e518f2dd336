// What the page keeps for this tab. The token: in sessionStorage only, never in a URL or a log,
// and only once the server has accepted it. The organisation's locations and quota as last seen:
// in the tab's history entry, so that reloading the page does not spend a request (a demo
// organisation's day has only so many) and nothing but the token lands in sessionStorage.

import type { Location } from '../client/index.ts'
import type { DayQuota } from './api.ts'

const TOKEN_KEY = 'queue-analytics-token'
const ZONE_KEY = 'queue-analytics-zone'

/** The token's organisation as the page last saw it. */
export interface Organisation {
  locations: Location[]
  demo: boolean
  day: DayQuota | null
  /** Epoch ms of the answer the quota figures come from. */
  seenAt: number
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY)
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token)
}

/** The time zone chosen on the page, kept for the tab like the token (set only once one is chosen). */
export function storedZone(): string | null {
  return sessionStorage.getItem(ZONE_KEY)
}

export function storeZone(zone: string): void {
  sessionStorage.setItem(ZONE_KEY, zone)
}

/** The first characters of a token, as `admin token list` shows them: enough to tell tokens apart. */
export function tokenHint(token: string): string {
  return `${token.slice(0, 8)}…`
}

interface HistoryState {
  organisation?: (Organisation & { tokenHint: string }) | null
}

function historyState(): HistoryState {
  return (history.state ?? {}) as HistoryState
}

/** The organisation as last seen with `token`, or null. */
export function rememberedOrganisation(token: string | null): Organisation | null {
  const remembered = historyState().organisation
  return remembered && token && remembered.tokenHint === tokenHint(token) ? remembered : null
}

export function rememberOrganisation(token: string, organisation: Organisation): void {
  history.replaceState({ ...historyState(), organisation: { ...organisation, tokenHint: tokenHint(token) } }, '')
}

export function forgetSession(): void {
  sessionStorage.removeItem(TOKEN_KEY)
  history.replaceState({ ...historyState(), organisation: null }, '')
}
