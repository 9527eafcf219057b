/**
 * @module
 * The admission as one Redis script, so check and consume are atomic on the server that holds
 * the account's keys. Every key of an account carries the hash tag `{acct:ID}`, so in Redis
 * Cluster they live in one slot and the script may touch them all.
 *
 * KEYS: 1 the admission log (sorted set: member = sequence number, score = admission time ms),
 *       2 the sequence counter, 3 the key's refusal counter (hash: n, since).
 * ARGV: 1 rpm, 2 rpd (-1 = no limit), 3 minute span ms, 4 day span ms, 5 suspension
 *       max refusals (-1 = off), 6 suspension window ms, 7 suspension duration ms,
 *       8 now ms (-1 = the server's TIME), 9 mode ('admit' | 'peek' | 'reject': count one refusal
 *       the gateway made itself, e.g. an invalid body, toward suspension, and decide nothing else).
 *       10-13: the charge, the account's key prefix, the key id, the reservation handle
 *       (charge-script.ts; ARGV[10] empty = none). 14 the gateway's deadline for an admission
 *       (ms on its clock, -1 = none), 15 how long the account's `built` marker lives (ms).
 * Returns { admitted 0|1 (2: the account's state must be rebuilt first, 3: past the deadline),
 *           full window '' | 'minute' | 'day', retry at, decided at,
 *           minute used, minute oldest (-1), day used, day oldest (-1), suspended until (-1),
 *           the charge decision (JSON, or empty) }.
 *
 * The log keeps only the longest limited window, so it never holds more than max(rpm, rpd)
 * members; every key gets an expiry, so an idle account leaves nothing behind. The `built`
 * marker outlives every other key of the account (each admission extends it), so a missing
 * marker means the account's state is missing too.
 */
import { CHARGE_LUA } from './charge-script.ts'

export const ADMIT_SCRIPT = `
local log, seqk, rejk = KEYS[1], KEYS[2], KEYS[3]
local rpm, rpd = tonumber(ARGV[1]), tonumber(ARGV[2])
local minute_ms, day_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local smax, swin, sdur = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local now = tonumber(ARGV[8])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Fixed windows per key that start at the first refusal, as in the SQL stores. Returns the end of
-- the suspension this refusal starts, or -1.
local function refuse()
  if smax < 0 then return -1 end
  local since = tonumber(redis.call('HGET', rejk, 'since') or '-1')
  local n
  if since < 0 or since <= now - swin then
    redis.call('HSET', rejk, 'n', 1, 'since', string.format('%d', now))
    n = 1
  else
    n = redis.call('HINCRBY', rejk, 'n', 1)
  end
  redis.call('PEXPIRE', rejk, swin)
  if n > smax then
    redis.call('DEL', rejk)
    return now + sdur
  end
  return -1
end
if ARGV[9] == 'reject' then return { 0, '', -1, now, 0, -1, 0, -1, refuse() } end
-- An account whose state was never built here (or was lost: a restart without AOF, FLUSHALL, an
-- empty replica) admits nothing until the gateway rebuilt it from the database (rebuild-script.ts).
if redis.call('EXISTS', ARGV[11] .. 'built') == 0 then return { 2, 'rebuild', -1, now, 0, -1, 0, -1, -1 } end
-- Past the gateway's deadline its caller was already told 503: admitting now would count a
-- request nobody serves.
if ARGV[9] == 'admit' and tonumber(ARGV[14]) >= 0 and now > tonumber(ARGV[14]) then
  return { 3, 'late', -1, now, 0, -1, 0, -1, -1 }
end

local keep = 0
if rpm >= 0 then keep = minute_ms end
if rpd >= 0 and day_ms > keep then keep = day_ms end
if keep > 0 then redis.call('ZREMRANGEBYSCORE', log, '-inf', string.format('%d', now - keep)) end

local function window(limit, span)
  if limit < 0 then return 0, -1 end
  local cut = '(' .. string.format('%d', now - span)
  local used = redis.call('ZCOUNT', log, cut, '+inf')
  if used == 0 then return 0, -1 end
  local first = redis.call('ZRANGEBYSCORE', log, cut, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return used, tonumber(first[2])
end

local m_used, m_first = window(rpm, minute_ms)
local d_used, d_first = window(rpd, day_ms)
if ARGV[9] == 'peek' then return { 0, '', -1, now, m_used, m_first, d_used, d_first, -1 } end

-- A full window admits again once the (used - limit + 1)th oldest admission inside it leaves.
local function retry_of(limit, span, used)
  local cut = '(' .. string.format('%d', now - span)
  local freeing = redis.call('ZRANGEBYSCORE', log, cut, '+inf', 'WITHSCORES', 'LIMIT', used - limit, 1)
  return tonumber(freeing[2]) + span
end

-- Until a request would be admitted: with both windows full, the later of the two.
local full, retry = '', -1
if rpm >= 0 and m_used >= rpm then full, retry = 'minute', retry_of(rpm, minute_ms, m_used) end
if rpd >= 0 and d_used >= rpd then
  local d = retry_of(rpd, day_ms, d_used)
  if d > retry then full, retry = 'day', d end
end
if full ~= '' then
  return { 0, full, retry, now, m_used, m_first, d_used, d_first, refuse() }
end

local at = now
if keep > 0 then
  -- Times never go backwards within an account (a server clock step, a failover).
  local top = redis.call('ZRANGE', log, -1, -1, 'WITHSCORES')
  if top[2] and tonumber(top[2]) > at then at = tonumber(top[2]) end
end
${CHARGE_LUA}
if keep > 0 then
  local seq = redis.call('INCR', seqk)
  redis.call('ZADD', log, string.format('%d', at), seq)
  redis.call('PEXPIRE', log, keep)
  redis.call('PEXPIRE', seqk, keep)
end
redis.call('PEXPIRE', ARGV[11] .. 'built', tonumber(ARGV[15]))
return { 1, '', -1, at, m_used, m_first, d_used, d_first, -1, charged }
`
