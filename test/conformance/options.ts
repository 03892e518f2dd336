/**
 * What a run of the contract suite was given, read from the environment (docs/contract-suite.md).
 * Only API_BASE_URL and API_TOKEN are required; each optional variable unlocks checks that are
 * otherwise skipped under a name that says which variable would run them.
 */

/** The tokens the suite may use, by the part they play. `none` is a request without a valid token. */
export type Role = 'main' | 'demo' | 'disabled' | 'revoked' | 'none'

/** The variable that names each role's token, as the plan and the skipped checks print it. */
export const ROLE_VARIABLE: Record<Exclude<Role, 'none'>, string> = {
  main: 'API_TOKEN',
  demo: 'API_DEMO_TOKEN',
  disabled: 'API_DISABLED_TOKEN',
  revoked: 'API_REVOKED_TOKEN',
}

/** What an optional check needs beyond API_BASE_URL and API_TOKEN. */
export const NEEDS = ['API_DEMO_TOKEN', 'API_CONTRACT_DEMO_OK', 'API_DISABLED_TOKEN', 'API_REVOKED_TOKEN', 'API_CONTRACT_EXHAUST'] as const
export type Need = (typeof NEEDS)[number]

export interface SuiteOptions {
  /** Without a trailing slash; may carry a path prefix (a deployment behind `/api`). */
  baseUrl: string
  tokens: { main: string; demo?: string; disabled?: string; revoked?: string }
  /** API_CONTRACT_EXHAUST=1: the checks that spend the whole minute window may run. */
  exhaust: boolean
  /** API_CONTRACT_DEMO_OK=1: the demo checks may spend some of the demo organisation's day. */
  demoOk: boolean
}

/** Which of the optional needs these options satisfy. */
export function satisfied(options: SuiteOptions): Set<Need> {
  const given = new Set<Need>()
  if (options.tokens.demo) given.add('API_DEMO_TOKEN')
  if (options.demoOk) given.add('API_CONTRACT_DEMO_OK')
  if (options.tokens.disabled) given.add('API_DISABLED_TOKEN')
  if (options.tokens.revoked) given.add('API_REVOKED_TOKEN')
  if (options.exhaust) given.add('API_CONTRACT_EXHAUST')
  return given
}

/** Reads the options, or says in one line what is wrong with the environment. */
export function optionsFromEnv(env: Record<string, string | undefined>): SuiteOptions | { error: string } {
  const base = env.API_BASE_URL?.trim()
  const token = env.API_TOKEN?.trim()
  if (!base || !token) {
    return { error: 'contract: set API_BASE_URL and API_TOKEN, e.g. API_BASE_URL=http://127.0.0.1:3000 API_TOKEN=svc_... npm run -s contract' }
  }
  let url: URL
  try {
    url = new URL(base)
  } catch {
    return { error: `contract: API_BASE_URL is not a URL: "${base}"` }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: `contract: API_BASE_URL must be http:// or https://, got "${base}"` }
  if (url.search || url.hash) return { error: 'contract: API_BASE_URL must not carry a query or a fragment' }
  for (const flag of ['API_CONTRACT_EXHAUST', 'API_CONTRACT_DEMO_OK']) {
    const value = env[flag]
    if (value !== undefined && value !== '' && value !== '1') return { error: `contract: ${flag} must be 1 or unset, got "${value}"` }
  }
  const optional = (name: string) => env[name]?.trim() || undefined
  return {
    baseUrl: url.href.replace(/\/+$/, ''),
    tokens: { main: token, demo: optional('API_DEMO_TOKEN'), disabled: optional('API_DISABLED_TOKEN'), revoked: optional('API_REVOKED_TOKEN') },
    exhaust: env.API_CONTRACT_EXHAUST === '1',
    demoOk: env.API_CONTRACT_DEMO_OK === '1',
  }
}
