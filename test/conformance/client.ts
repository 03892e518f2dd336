import { Pacer, type SuiteClock } from './pacer.ts'
import { ROLE_VARIABLE, type Role, type SuiteOptions } from './options.ts'

/** One request the suite made and the whole answer, kept for the checks that look at every answer. */
export interface Exchange {
  method: string
  /** Path and query as sent, below the base URL. */
  path: string
  role: Role
  /** When it was sent, by the suite's clock. */
  at: number
  status: number
  headers: Headers
  bytes: Uint8Array
  text: string
  /** The body parsed as JSON; throws with the body's start when it is not JSON. */
  json<T = Record<string, unknown>>(): T
}

export interface RequestOptions {
  /** Whose token goes in `Authorization: Bearer …`; `none` sends none unless `authorization` is given. */
  as?: Role
  /** An Authorization header to send verbatim (the security checks' malformed ones). */
  authorization?: string
  method?: string
  headers?: Record<string, string>
  /** Skip the pacer: only for the checks that mean to exceed the window. */
  unpaced?: boolean
}

/** Sent with every request: the contract lets any origin call, and CORS headers may depend on it. */
export const SUITE_ORIGIN = 'https://contract-suite.example'

/**
 * The suite's only way to the server. It adds the role's token, paces each token, keeps every
 * exchange for the audit checks, and holds each check to the request budget it announced: the
 * plan printed before a run is an upper bound because a check that tries to exceed it fails.
 */
export class ContractClient {
  readonly exchanges: Exchange[] = []
  /** Requests made so far, by role: what the run spent. */
  readonly spent: Record<Role, number> = { main: 0, demo: 0, disabled: 0, revoked: 0, none: 0 }
  private readonly pacers = new Map<Role, Pacer>()
  /**
   * The per-token minute limit the server advertises (X-RateLimit-Limit of the first answer
   * that carried one): the contract says 60, an operator may configure another
   * (RATE_LIMIT_PER_MINUTE), and the checks hold the server to what it says.
   */
  minuteLimit: number | undefined
  private budget: { check: string; left: Partial<Record<Role, number>> } | null = null

  constructor(
    private readonly options: SuiteOptions,
    private readonly clock: SuiteClock,
    /** Tells the person running the suite about a wait. */
    private readonly say: (line: string) => void,
  ) {}

  /** Opens the budget of one check; requests beyond it throw. */
  beginCheck(check: string, cost: Partial<Record<Role, number>>): void {
    this.budget = { check, left: { ...cost } }
  }

  endCheck(): void {
    this.budget = null
  }

  async request(path: string, options: RequestOptions = {}): Promise<Exchange> {
    const role = options.as ?? 'none'
    const method = options.method ?? 'GET'
    this.charge(role)
    const headers: Record<string, string> = { Origin: SUITE_ORIGIN, 'Accept-Encoding': 'identity', ...options.headers }
    const token = role === 'none' ? undefined : this.options.tokens[role]
    if (role !== 'none' && !token) throw new Error(`no token for role ${role}`)
    if (options.authorization !== undefined) headers.Authorization = options.authorization
    else if (token) headers.Authorization = `Bearer ${token}`

    const pacer = token ? this.pacer(role) : undefined
    await pacer?.beforeRequest({ wait: !options.unpaced })
    const at = this.clock.now()
    // decompress: false, so that the gzip check sees the bytes as sent (Bun's fetch would inflate them).
    const response = await fetch(this.options.baseUrl + path, { method, headers, redirect: 'manual', decompress: false } as RequestInit)
    const bytes = new Uint8Array(await response.arrayBuffer())
    pacer?.afterResponse(response.headers)
    const advertised = response.headers.get('x-ratelimit-limit')
    if (this.minuteLimit === undefined && token && advertised !== null && /^[1-9]\d*$/.test(advertised)) this.minuteLimit = Number(advertised)
    // ignoreBOM keeps a byte-order mark in the text, where the checks can see it.
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)
    const exchange: Exchange = {
      method,
      path,
      role,
      at,
      status: response.status,
      headers: response.headers,
      bytes,
      text,
      json<T>() {
        try {
          return JSON.parse(text) as T
        } catch {
          throw new Error(`${method} ${path}: the body is not JSON: ${JSON.stringify(text.slice(0, 120))}`)
        }
      },
    }
    this.exchanges.push(exchange)
    return exchange
  }

  get(path: string, as: Role = 'main', headers?: Record<string, string>): Promise<Exchange> {
    return this.request(path, { as, headers })
  }

  private charge(role: Role): void {
    this.spent[role]++
    if (!this.budget) return
    const left = (this.budget.left[role] ?? 0) - 1
    if (left < 0) throw new Error(`check "${this.budget.check}" made more requests as ${role} than its announced budget`)
    this.budget.left[role] = left
  }

  private pacer(role: Role): Pacer {
    let pacer = this.pacers.get(role)
    if (!pacer) {
      const variable = ROLE_VARIABLE[role as Exclude<Role, 'none'>]
      pacer = new Pacer(this.clock, (ms) => this.say(`contract: waiting ${Math.ceil(ms / 1000)} s to stay inside ${variable}'s minute window`))
      this.pacers.set(role, pacer)
    }
    return pacer
  }
}

/** The minute limit the server advertised to the run's tokens; a check that needs it fails without it. */
export function advertisedLimit(client: ContractClient): number {
  if (client.minuteLimit === undefined) throw new Error('no answer to a token carried X-RateLimit-Limit, so the minute window\'s size is unknown')
  return client.minuteLimit
}
