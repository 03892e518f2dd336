import type { QueuesResponse, Ticket, TicketPage } from '../contract/schemas.ts'
import { CHANGES_FLOOR_HEADER, TICKET_FILTERS, type TicketFilter, type TicketFilterValue } from '../contract/vocabulary.ts'
import { UnexpectedResponseError } from './errors.ts'
import { sendWithRetries, WaitBudget, type FetchLike, type RetryEvent, type RetryPolicy } from './retry.ts'
import { splitIntoWindows, toInstant, type Window } from './windows.ts'
import { concatenateCsvWindows } from './csv-windows.ts'
import { exportFileName } from '../contract/instant.ts'

export interface ClientOptions {
  /** Where the API is served, e.g. `https://analytics.example.com` (paths start with /v1). */
  baseUrl: string
  /** An API token (`svc_…`). It is sent in the Authorization header only. */
  token: string
  /** @default globalThis.fetch */
  fetch?: FetchLike
  /**
   * Seconds one call (an iteration, an export) may spend waiting for the minute window to let
   * it through; past that the 429 is thrown as RateLimitedError.
   * @default 300
   */
  maxRetryWaitSeconds?: number
  /**
   * Tries of one request when the answer is a 5xx or no answer at all (the first included).
   * @default 4
   */
  maxAttempts?: number
  /**
   * Milliseconds a request may go without a byte: the wait for an answer's headers, and each
   * wait for the next chunk of its body. Past it the request is abandoned with TimeoutError
   * (not retried: a stalled server would stall each try).
   * @default 60000
   */
  timeoutMs?: number
  /** Told before every wait: the minute window, a 5xx answer, or a failed connection. */
  onRetry?: (event: RetryEvent) => void
  /**
   * Told of every answer, error answers included, before the client acts on it: for reading
   * headers it does not interpret, such as the day's quota in `RateLimit`.
   */
  onResponse?: (response: Response) => void
  /** How the client waits; a test may pass one that moves a fake clock. @default setTimeout */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** Source of the backoff's jitter, in [0, 1). @default Math.random */
  random?: () => number
}

/** The filters of a query (`queueId`, `locationId`, `status`, …): one value or several, from the contract's table. */
export type TicketFilters = { [F in TicketFilter as F['parameter']]?: TicketFilterValue<F> | readonly TicketFilterValue<F>[] }

/** The query of both ticket operations; a range longer than 90 days is split by the client. */
export interface TicketQuery extends TicketFilters {
  /** Inclusive start of creation time: a Date, epoch ms, `2026-03-01` or an RFC 3339 date-time with Z or an offset. */
  from: Date | number | string
  /** Exclusive end of creation time, in the same forms. */
  to: Date | number | string
  /** Page size, 1 to 500 (`pages` and `tickets` only). @default 100 on the server */
  limit?: number
  /** Only tickets inserted or changed after this `X-Changes-Token` (see `changes`). */
  changedAfter?: string
}

export interface PageOfTickets extends TicketPage {
  /** The range of the window this page belongs to (the query's range split into ≤ 90 days). */
  window: { from: string; to: string }
  /** `X-Changes-Token` of this response: the position to pass as `changedAfter` next run. Null when the server keeps no change log. */
  changesToken: string | null
}

export interface CsvExport {
  /** The CSV bytes of the whole range: one header row, then the rows of every window in order. */
  stream: ReadableStream<Uint8Array>
  /** The file name the server gives (`tickets_…csv`, `demo-tickets_…csv` for a demo organisation). */
  fileName: string
  /** `X-Changes-Token` of the first window's response, or null. */
  changesToken: string | null
  demo: boolean
}

/** What every call takes beside its query. */
export interface CallOptions {
  /** Abandons the call: the request in flight, a wait for the minute window, the rest of an iteration or a stream. */
  signal?: AbortSignal
  /**
   * An X-Changes-Token already held: every answer must come from data at least that fresh. A
   * replica whose copy lags answers 503 `copy_behind`, which is retried, never a short answer.
   * @default the X-Changes-Token of this client's latest answer about tickets (reads never go back)
   */
  floor?: string
}

/** The rows changed after a token, and the token to store for next time. */
export interface ChangeSet {
  /** Every ticket of the range inserted or changed after the token, window by window. */
  tickets: AsyncIterable<Ticket>
  /** The token to pass next run: known once the first page has been read (null before). */
  readonly nextToken: string | null
}

/**
 * A client of the queue analytics API (docs/loading.md): pages followed to the end, ranges
 * longer than 90 days split into windows, the minute window waited for, 5xx and dropped
 * connections retried, every error answer a typed error. Depends on nothing but `fetch`.
 */
export class Client {
  private readonly baseUrl: string
  private readonly authorization: string
  private readonly policy: RetryPolicy
  /**
   * The X-Changes-Token of the latest answer about tickets: sent as X-Changes-Floor with every
   * later request, /v1/queues too (unless the call names its own floor), so that behind a balancer a replica whose
   * copy is older than what this client has already read answers 503 copy_behind (retried)
   * rather than data from before it. Each answer is at least as fresh as the floor it was
   * asked with, so the latest token is the freshest.
   */
  private seen: string | null = null

  constructor(options: ClientOptions) {
    if (!/^https?:\/\//i.test(options.baseUrl)) throw new TypeError(`baseUrl must be an http(s) URL; got ${options.baseUrl}`)
    if (!options.token) throw new TypeError('token is required')
    if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) throw new TypeError(`timeoutMs must be a positive number of milliseconds; got ${options.timeoutMs}`)
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.authorization = `Bearer ${options.token}`
    this.policy = {
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      sleep: options.sleep ?? abortableSleep,
      random: options.random ?? Math.random,
      maxAttempts: options.maxAttempts ?? 4,
      maxRetryWaitSeconds: options.maxRetryWaitSeconds ?? 300,
      timeoutMs: options.timeoutMs ?? 60_000,
      onRetry: options.onRetry,
      onResponse: options.onResponse,
    }
  }

  /** Every location with its queues. */
  async queues(options: CallOptions = {}): Promise<QueuesResponse> {
    const response = await this.get('/v1/queues', new URLSearchParams(), new WaitBudget(), { signal: options.signal, floor: options.floor })
    return (await response.json()) as QueuesResponse
  }

  /** Every page of the range, window after window, each page's cursor followed to the end. */
  pages(query: TicketQuery, options: CallOptions = {}): AsyncGenerator<PageOfTickets> {
    return this.walk(query, new WaitBudget(), options)
  }

  /** Every ticket of the range, in (createdAt, id) order within each window, windows in order. */
  async *tickets(query: TicketQuery, options: CallOptions = {}): AsyncGenerator<Ticket> {
    for await (const page of this.pages(query, options)) yield* page.items
  }

  /** The tickets of the range inserted or changed after `token` (an `X-Changes-Token` kept from an earlier response). */
  changes(query: TicketQuery, token: string, options: CallOptions = {}): ChangeSet {
    if (!token) throw new TypeError('changes() needs a token from an earlier response (X-Changes-Token)')
    let nextToken: string | null = null
    const pages = this.walk({ ...query, changedAfter: token }, new WaitBudget(), options)
    return {
      get nextToken() {
        return nextToken
      },
      tickets: (async function* () {
        for await (const page of pages) {
          // The first response's token: the run's earliest snapshot, so a change made while the
          // run goes on comes again next time rather than never.
          nextToken ??= page.changesToken
          yield* page.items
        }
      })(),
    }
  }

  /**
   * The CSV export of the range: the first window is asked for before this resolves (so a bad
   * query or token throws here), later windows as the stream is read. `signal` abandons it.
   */
  async exportCsv(query: TicketQuery, options: CallOptions = {}): Promise<CsvExport> {
    const budget = new WaitBudget()
    const windows = this.windowsOf(query)
    const params = (window: Window) => this.params(query, window, false)
    const first = await this.get('/v1/exports/tickets.csv', params(windows[0]!), budget, options)
    const disposition = /filename="([^"]+)"/.exec(first.headers.get('content-disposition') ?? '')
    if (!first.body || !disposition) throw new UnexpectedResponseError('the CSV export answered without a body or a file name', first.status)
    const demo = first.headers.get('x-service-demo') === '1'
    const rest = windows.slice(1).map((window) => () => this.get('/v1/exports/tickets.csv', params(window), budget, options).then((r) => r.body!))
    const range = { fromMs: windows[0]!.fromMs, toMs: windows[windows.length - 1]!.toMs }
    return {
      stream: concatenateCsvWindows(first.body, rest),
      fileName: windows.length === 1 ? disposition[1]! : exportFileName(range.fromMs, range.toMs, demo),
      changesToken: first.headers.get('x-changes-token'),
      demo,
    }
  }

  private async *walk(query: TicketQuery, budget: WaitBudget, options: CallOptions): AsyncGenerator<PageOfTickets> {
    for (const window of this.windowsOf(query)) {
      const base = this.params(query, window, true)
      let cursor: string | null = null
      do {
        const params = new URLSearchParams(base)
        if (cursor !== null) params.set('cursor', cursor)
        const response = await this.get('/v1/tickets', params, budget, options)
        const page = (await response.json()) as TicketPage
        yield {
          ...page,
          window: { from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() },
          changesToken: response.headers.get('x-changes-token'),
        }
        cursor = page.nextCursor
      } while (cursor !== null)
    }
  }

  private windowsOf(query: TicketQuery): Window[] {
    const fromMs = toInstant(query.from, 'from')
    const toMs = toInstant(query.to, 'to')
    if (fromMs >= toMs) throw new RangeError("'to' must be later than 'from' ('to' is exclusive)")
    return splitIntoWindows(fromMs, toMs)
  }

  private params(query: TicketQuery, window: Window, page: boolean): URLSearchParams {
    const params = new URLSearchParams({ from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() })
    for (const { parameter } of TICKET_FILTERS) {
      const values: string | readonly string[] | undefined = query[parameter]
      for (const value of values === undefined ? [] : typeof values === 'string' ? [values] : values) params.append(parameter, value)
    }
    if (page && query.limit !== undefined) params.set('limit', String(query.limit))
    if (query.changedAfter !== undefined) params.set('changedAfter', query.changedAfter)
    return params
  }

  private get(path: string, params: URLSearchParams, budget: WaitBudget, { signal, floor }: CallOptions = {}): Promise<Response> {
    const query = params.toString()
    const url = `${this.baseUrl}${path}${query ? `?${query}` : ''}`
    const headers: Record<string, string> = { Authorization: this.authorization, Accept: path.endsWith('.csv') ? 'text/csv' : 'application/json' }
    const atLeast = floor ?? this.seen
    if (atLeast) headers[CHANGES_FLOOR_HEADER] = atLeast
    return sendWithRetries(url, { headers, signal }, this.policy, budget).then((response) => {
      const token = response.headers.get('x-changes-token')
      if (token) this.seen = token
      return response
    })
  }
}

/** A timer that is cleared when `signal` aborts, so that an abandoned wait keeps no process alive. */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => clearTimeout(timer)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop)
      resolve()
    }, ms)
    signal?.addEventListener('abort', stop, { once: true })
  })
}
