// What the page keeps for this tab. The token: in sessionStorage only, never in a URL or a log,
// and only once the server has accepted it. The organisation's locations and quota as last seen:
// in the tab's history entry, so that reloading the page does not spend a request (a demo
// organisation's day has only so many) and nothing but the token lands in sessionStorage.

const TOKEN_KEY = 'queue-analytics-token'

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY)
}

export function storeToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token)
}

/** The first characters of a token, as `admin token list` shows them: enough to tell tokens apart. */
export function tokenHint(token) {
  return `${token.slice(0, 8)}…`
}

/** `{ locations, demo, day, seenAt }` as last seen with `token`, or null. */
export function rememberedOrganisation(token) {
  const remembered = history.state?.organisation
  return remembered && token && remembered.tokenHint === tokenHint(token) ? remembered : null
}

export function rememberOrganisation(token, organisation) {
  history.replaceState({ ...history.state, organisation: { ...organisation, tokenHint: tokenHint(token) } }, '')
}

export function forgetSession() {
  sessionStorage.removeItem(TOKEN_KEY)
  history.replaceState({ ...history.state, organisation: null }, '')
}
