import { RedisClient } from 'bun'
import { systemClock, type Clock } from '../../clock.ts'
import { loginFailure } from './login-check.ts'

/** A deadline no script reaches: the year 287,000 in milliseconds, exact as a Lua double. */
const NO_DEADLINE = 9_000_000_000_000_000

/**
 * One connection to Redis for the limits, every call bounded in time. Bun's client reconnects
 * with replies mismatched or lost, so its reconnection is off and a call that fails or times out
 * replaces the client (docs/decisions/0012-bun-redis-client.md); after a failed attempt calls
 * fail at once for `retryDelayMs`. A script reply must carry back the call's nonce, and a script
 * Redis runs after its deadline (half the command timeout, on Redis's clock) changes nothing.
 */

/** The prefix of every key of the limits unless configured otherwise, so that they can share a Redis with other data. */
export const DEFAULT_KEY_PREFIX = 'limits:'

export interface RedisConnectionOptions {
  /** How long one command may take before the call fails. @default 1000 */
  commandTimeoutMs?: number
  /** How long opening a connection (TCP and the HELLO handshake) may take. @default 1000 */
  connectTimeoutMs?: number
  /** After a failed connection attempt, calls fail at once for this long. @default 100 */
  retryDelayMs?: number
  /** Whose monotonic time the retry delay runs on. @default the system's */
  clock?: Clock
}

/** A Lua script run by its SHA-1 (EVALSHA), sent whole only when Redis does not have it (NOSCRIPT). */
export interface RedisScript {
  readonly source: string
  readonly sha: string
}

/**
 * The shebang of every script: Redis 7's declaration of a script that writes (no `no-writes`,
 * no `allow-oom`). Redis then refuses the whole script with OOM before it runs when memory is
 * over `maxmemory`; a script without it is checked only at its first write command, and ours
 * begin with one that frees memory (ZREMRANGEBYSCORE), after which every write is let through.
 */
const WRITING_SCRIPT = '#!lua\n'

/** A script that writes (see WRITING_SCRIPT); `body` is its Lua code. */
export function redisScript(body: string): RedisScript {
  const source = WRITING_SCRIPT + body
  return { source, sha: new Bun.CryptoHasher('sha1').update(source).digest('hex') }
}

/** What the limiter and the quota need of a connection. */
export type ScriptRunner = Pick<RedisConnection, 'run' | 'ping' | 'close'>

export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError'
}

export class RedisConnection {
  private readonly commandTimeoutMs: number
  private readonly connectTimeoutMs: number
  private readonly retryDelayMs: number
  private readonly clock: Clock
  private current: RedisClient | undefined
  /** Redis's clock minus performance.now(), in ms, read when `current` was opened. */
  private redisClockOffset = 0
  private opening: Promise<RedisClient> | undefined
  private failedUntil = 0
  private lastFailure: Error | undefined
  private closed = false
  private nonces = 0

  constructor(
    private readonly url: string,
    options: RedisConnectionOptions = {},
  ) {
    this.commandTimeoutMs = options.commandTimeoutMs ?? 1000
    this.connectTimeoutMs = options.connectTimeoutMs ?? 1000
    this.retryDelayMs = options.retryDelayMs ?? 100
    this.clock = options.clock ?? systemClock
  }

  /** Sends one command; rejects within the command timeout (plus the connect timeout when a connection must be opened). */
  async send(command: string, args: string[]): Promise<unknown> {
    return (await this.exchange(command, args)).reply
  }

  /** One command and its reply, with the client that carried them (the one to drop if the reply is wrong). */
  private async exchange(command: string, args: string[]): Promise<{ reply: unknown; client: RedisClient }> {
    const client = this.current?.connected ? this.current : await this.client()
    try {
      return { reply: await bounded(client.send(command, args), this.commandTimeoutMs, command), client }
    } catch (error) {
      // An error reply (NOSCRIPT, WRONGTYPE…) leaves the connection sound; anything else may not.
      if ((error as { code?: string }).code !== 'ERR_REDIS_SERVER_ERROR') this.discard(client)
      throw error
    }
  }

  /**
   * Runs `script` with `keys` and `args`; the script receives a nonce as ARGV[1] (before `args`)
   * and must return it as the first element of its reply, which is returned without it.
   * `lateIsHarmless`: a command that is right whenever Redis runs it (giving back a request's
   * unique member) carries no deadline, so that a stall cannot leave counted a request it was
   * meant to take back.
   */
  async run(script: RedisScript, keys: string[], args: string[], options: { lateIsHarmless?: boolean } = {}): Promise<unknown[]> {
    const nonce = (++this.nonces).toString(36)
    // The connection first: its clock reading makes the deadline.
    if (!this.current?.connected) await this.client()
    const deadline = options.lateIsHarmless ? NO_DEADLINE : Math.floor(performance.now() + this.redisClockOffset + this.commandTimeoutMs / 2)
    const tail = [String(keys.length), ...keys, nonce, String(deadline), ...args]
    let answer: { reply: unknown; client: RedisClient }
    try {
      answer = await this.exchange('EVALSHA', [script.sha, ...tail])
    } catch (error) {
      // A restarted or flushed Redis has lost its script cache; EVAL loads the script again.
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error
      answer = await this.exchange('EVAL', [script.source, ...tail])
    }
    const { reply, client } = answer
    if (!Array.isArray(reply) || reply[0] !== nonce) {
      // That client, not whichever is current now: another call may already have replaced it.
      this.discard(client)
      throw new RedisUnavailableError('Redis answered with a reply that belongs to another command; the connection was replaced')
    }
    if (reply[1] === 'late') {
      this.discard(client)
      throw new RedisUnavailableError("Redis ran the command after its deadline (its clock and this process's disagree); the connection was replaced")
    }
    return reply.slice(1)
  }

  /** Resolves when Redis answers PING. */
  async ping(): Promise<void> {
    await this.send('PING', [])
  }

  close(): void {
    this.closed = true
    this.discard(this.current)
  }

  private client(): Promise<RedisClient> {
    if (this.current?.connected) return Promise.resolve(this.current)
    this.discard(this.current)
    if (this.closed) return Promise.reject(new RedisUnavailableError('the Redis connection is closed'))
    if (!this.opening) {
      if (this.clock.monotonic() < this.failedUntil) return Promise.reject(this.lastFailure!)
      this.opening = this.open().finally(() => (this.opening = undefined))
    }
    return this.opening
  }

  private async open(): Promise<RedisClient> {
    const client = new RedisClient(this.url, {
      autoReconnect: false,
      enableOfflineQueue: false,
      connectionTimeout: this.connectTimeoutMs,
    })
    try {
      await bounded(client.connect(), this.connectTimeoutMs, 'connect')
    } catch (error) {
      client.close()
      // A refused login closes the connection too: say so when that is why.
      const login = (error as { code?: string }).code === 'ERR_REDIS_CONNECTION_CLOSED' ? await loginFailure(this.url, this.connectTimeoutMs) : undefined
      this.failedUntil = this.clock.monotonic() + this.retryDelayMs
      // The client's message never holds the URL (it may carry a password); keep only the message.
      this.lastFailure = new RedisUnavailableError(login ? `cannot log in to Redis: ${login}` : `cannot connect to Redis: ${(error as Error).message}`)
      throw this.lastFailure
    }
    let offset: number
    try {
      offset = await readClockOffset(client, this.connectTimeoutMs)
    } catch (error) {
      client.close()
      this.failedUntil = this.clock.monotonic() + this.retryDelayMs
      this.lastFailure = new RedisUnavailableError(`cannot read Redis's clock: ${(error as Error).message}`)
      throw this.lastFailure
    }
    if (this.closed) {
      client.close()
      throw new RedisUnavailableError('the Redis connection is closed')
    }
    this.redisClockOffset = offset
    this.current = client
    return client
  }

  private discard(client: RedisClient | undefined): void {
    if (!client) return
    if (this.current === client) this.current = undefined
    client.close()
  }
}

/** Redis's clock (`TIME`, ms) minus performance.now() at the middle of the round trip. */
async function readClockOffset(client: RedisClient, timeoutMs: number): Promise<number> {
  const sent = performance.now()
  const [seconds, micros] = (await bounded(client.send('TIME', []), timeoutMs, 'TIME')) as [string, string]
  const received = performance.now()
  return Number(seconds) * 1000 + Number(micros) / 1000 - (sent + received) / 2
}

/** `promise`, or a rejection once `ms` have passed. */
function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnavailableError(`Redis did not answer ${what} within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
