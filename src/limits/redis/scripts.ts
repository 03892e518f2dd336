import { randomBytes } from 'node:crypto'
import { redisScript } from './connection.ts'

/**
 * The Lua scripts of the Redis limits. Each runs atomically inside Redis, so that the processes
 * sharing one Redis cannot interleave between reading a count and changing it, and each reads
 * the time from Redis (`TIME`, in whole milliseconds, as the in-memory window counts), so that
 * the processes' clocks do not matter. ARGV[1] is the connection's nonce, returned first, and
 * ARGV[2] the call's deadline on Redis's clock (see RedisConnection.run): a script that runs
 * after it changes nothing and answers {nonce, 'late'}, so that a command Redis reads late (it
 * was stopped, or the network held it) never counts a request already refused with a 503.
 * Milliseconds since 1970 (13 digits) fit the 14 significant digits of Lua's doubles.
 */

/**
 * The start of every script: Redis's time, `now` in whole milliseconds, and nothing done after
 * the deadline (ARGV[2]).
 */
const ON_TIME = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if now > tonumber(ARGV[2]) then return {ARGV[1], 'late'} end`

/**
 * The readiness check: answers with the nonce and changes nothing, but is declared like every
 * other script, so Redis refuses it when it would refuse them (out of memory), where PING
 * would still answer. Returns {nonce}.
 */
export const PROBE_SCRIPT = redisScript(`return {ARGV[1]}`)

/**
 * The sliding window of one token: a sorted set in KEYS[1], one member per counted request
 * (unique per request, so that two requests in the same millisecond are two entries and a
 * release removes exactly its own), scored by the request's time.
 * ARGV: nonce, deadline, mode (consume | peek | release), limit, window in ms, member.
 * Trims the requests that left the window (time ≤ now − window, as the in-memory log does),
 * counts, and for `consume` adds the member if one more fits and sets the key to expire with
 * its newest request; `release` removes the member first.
 * Returns {nonce, counted (0|1), count, now, newest time or false, blocking time or false}:
 * what describeWindow needs, the blocking time only when one more would not fit.
 */
export const WINDOW_SCRIPT = redisScript(`${ON_TIME}
local key, mode, limit, window, member = KEYS[1], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
if mode == 'release' then redis.call('ZREM', key, member) end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local counted = 0
if mode == 'consume' and count < limit then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window)
  count = count + 1
  counted = 1
end
local newest, blocking = false, false
if count > 0 then newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2] end
if counted == 0 and count >= limit then
  blocking = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')[2]
end
return {ARGV[1], counted, count, now, newest, blocking}
`)

/**
 * The demo quota of one organisation: a counter per UTC day, KEYS[1] .. ':' .. the day's number
 * since 1970 (from Redis's clock), expiring 31 days after its day ends. Not at its end: Redis
 * expires keys by its wall clock, so a clock stepped a few days ahead would drop the real day's
 * counter, and putting it right would hand that day out again.
 * ARGV: nonce, deadline, mode (consume | peek | release), limit, and for release the day's number.
 * `release` takes one back from that day's counter (never below zero): a request counted that
 * the server failed itself (503 copy_behind).
 * `consume` increments, and takes the increment back when it went over the limit (a request
 * the quota refuses consumes nothing); the script is atomic, so concurrent bursts of any number
 * of processes cannot overfill the day.
 * Returns {nonce, allowed (0|1), used, now}.
 */
export const QUOTA_SCRIPT = redisScript(`${ON_TIME}
local limit = tonumber(ARGV[4])
local day = math.floor(tonumber(time[1]) / 86400)
if ARGV[3] == 'release' then day = tonumber(ARGV[5]) end
local key = KEYS[1] .. ':' .. day
if ARGV[3] == 'release' then
  local used = tonumber(redis.call('GET', key) or '0')
  if used > 0 then used = redis.call('DECR', key) end
  return {ARGV[1], used < limit and 1 or 0, used, now}
end
if ARGV[3] == 'peek' then
  local used = tonumber(redis.call('GET', key) or '0')
  return {ARGV[1], used < limit and 1 or 0, used, now}
end
local used = redis.call('INCR', key)
if used == 1 then redis.call('EXPIREAT', key, (day + 32) * 86400) end
if used > limit then
  redis.call('DECR', key)
  return {ARGV[1], 0, used - 1, now}
end
return {ARGV[1], 1, used, now}
`)

/**
 * The exports running at once (docs/operations.md#the-running-exports-in-redis): a sorted set
 * per token in KEYS[1] and one for all tokens in KEYS[2], one member per running export (unique
 * across processes), scored by the time on Redis's clock when its slot expires unless its holder
 * refreshes it. A process that dies holding slots stops refreshing them, and the next claim
 * drops them once expired; each key expires with its latest member.
 */
const EXPIRE_WITH_LATEST = `
local function expireWithLatest(key)
  local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
  if latest then redis.call('PEXPIREAT', key, latest) end
end`

/**
 * Claims a slot. ARGV: nonce, deadline, per-token limit, limit in all, hold in ms, member.
 * Drops the expired members, then adds the member to both sets if the token and all tokens
 * are under their limits; a refused claim adds nothing.
 * Returns {nonce, 'ok' | 'token' | 'all', running}: the token's running exports (counting this
 * one when taken), or those in all when the global limit refused it.
 */
export const CLAIM_EXPORT_SCRIPT = redisScript(`${ON_TIME}${EXPIRE_WITH_LATEST}
local tokenKey, allKey = KEYS[1], KEYS[2]
local perToken, max, hold, member = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
redis.call('ZREMRANGEBYSCORE', tokenKey, '-inf', now)
redis.call('ZREMRANGEBYSCORE', allKey, '-inf', now)
local mine = redis.call('ZCARD', tokenKey)
if mine >= perToken then return {ARGV[1], 'token', mine} end
local all = redis.call('ZCARD', allKey)
if all >= max then return {ARGV[1], 'all', all} end
redis.call('ZADD', tokenKey, now + hold, member)
redis.call('ZADD', allKey, now + hold, member)
expireWithLatest(tokenKey)
expireWithLatest(allKey)
return {ARGV[1], 'ok', mine + 1}
`)

/**
 * Moves a held slot's expiry to `hold` ms from now. ARGV: nonce, deadline, hold in ms, member.
 * A member already given back or dropped is not added again.
 * Returns {nonce, held (0|1)}.
 */
export const REFRESH_EXPORT_SCRIPT = redisScript(`${ON_TIME}${EXPIRE_WITH_LATEST}
local hold, member = tonumber(ARGV[3]), ARGV[4]
local held = 0
for _, key in ipairs(KEYS) do
  if redis.call('ZSCORE', key, member) then
    redis.call('ZADD', key, now + hold, member)
    expireWithLatest(key)
    held = 1
  end
end
return {ARGV[1], held}
`)

/**
 * Gives a slot back. ARGV: nonce, deadline (ignored: it is sent as none, like every give-back,
 * see RedisConnection.run's lateIsHarmless), member. The member is unique, so removing it late is
 * still right, while skipping it would keep the slot taken until it expires.
 * Returns {nonce, 'released'}.
 */
export const RELEASE_EXPORT_SCRIPT = redisScript(`
for _, key in ipairs(KEYS) do redis.call('ZREM', key, ARGV[3]) end
return {ARGV[1], 'released'}
`)

/**
 * Makes sorted-set members unique across every process sharing one Redis: this process's random
 * tag and a counter. Each counted request (or running export) is one member, so that two in the
 * same millisecond are two entries and a give-back removes exactly its own.
 */
export function memberIds(): () => string {
  const tag = randomBytes(6).toString('base64url')
  let counter = 0
  return () => `${tag}${(++counter).toString(36)}`
}
