import { redisScript } from './connection.ts'

/**
 * The Lua scripts of the Redis limits. Each runs atomically inside Redis, so that the processes
 * sharing one Redis cannot interleave between reading a count and changing it, and each reads
 * the time from Redis (`TIME`, in whole milliseconds, as the in-memory window counts), so that
 * the processes' clocks do not matter. ARGV[1] is the connection's nonce, returned first, and
 * ARGV[2] the call's deadline on Redis's clock (see RedisConnection.run): a script that runs
 * after it changes nothing and answers {nonce, 'late'}, so that a command Redis reads late (it
 * was stopped, or the network held it) never counts a request already refused with a 503. Numbers pass through Lua as doubles: milliseconds since 1970 are
 * 13 digits, inside Lua's 14 significant digits when Redis turns them into arguments.
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
 * since 1970 (from Redis's clock), expiring at the end of its day.
 * ARGV: nonce, deadline, mode (consume | peek), limit.
 * `consume` increments, and takes the increment back when it went over the limit (a request
 * the quota refuses consumes nothing); the script is atomic, so concurrent bursts of any number
 * of processes cannot overfill the day.
 * Returns {nonce, allowed (0|1), used, now}.
 */
export const QUOTA_SCRIPT = redisScript(`${ON_TIME}
local limit = tonumber(ARGV[4])
local day = math.floor(tonumber(time[1]) / 86400)
local key = KEYS[1] .. ':' .. day
if ARGV[3] == 'peek' then
  local used = tonumber(redis.call('GET', key) or '0')
  return {ARGV[1], used < limit and 1 or 0, used, now}
end
local used = redis.call('INCR', key)
if used == 1 then redis.call('EXPIREAT', key, (day + 1) * 86400) end
if used > limit then
  redis.call('DECR', key)
  return {ARGV[1], 0, used - 1, now}
end
return {ARGV[1], 1, used, now}
`)
