/**
 * @module
 * Reserve and settle in Redis (DESIGN §11): the charge part of the admission script
 * (admit-script.ts splices `CHARGE_LUA` in after the request windows, so both are one atomic
 * step) and the settlement script. The same rules as SQLite (sqlite/reserve.ts) and PostgreSQL
 * (migrations-v11.ts); every key shares the account's hash tag.
 *
 * Per charge scope (`a` the account, `k:<key id>` a key) and sliding window: a sorted set of the
 * charges inside it (member = reservation handle, score = time), a hash of their amounts and the
 * running sum; charges that left the window are subtracted and dropped at the next admission.
 * Money: one counter per scope and calendar period (bounds computed by the gateway for `now`).
 * `res`: each unsettled reservation (what it charged, where, when), deleted when it settles — once.
 */

/**
 * A row's use at `at`, as every script reads it: its key (the window's base, or the period's spend
 * counter), what is used, when it resets (null: nothing inside) and its window's span (0 for a
 * period). A sliding window's charges that left it are subtracted and dropped first.
 */
const ROW_USE_LUA = `
local function row_use(r, pre, keyid, periods, at, minute_ms, day_ms)
  local sc = 'a'
  if r.scope == 'key' then sc = 'k:' .. keyid end
  if r.window == 'period' then
    local p = periods[r.period]
    local key = pre .. 'sp:' .. sc .. ':' .. r.period .. ':' .. string.format('%d', p[1])
    return key, tonumber(redis.call('GET', key) or '0'), p[2], 0
  end
  local span = minute_ms
  if r.window == 'day' then span = day_ms end
  local base = pre .. 'c:' .. sc .. ':' .. r.resource .. ':' .. r.window
  local edge = string.format('%d', at - span)
  local gone = redis.call('ZRANGEBYSCORE', base .. ':z', '-inf', edge)
  if #gone > 0 then
    local amounts = redis.call('HMGET', base .. ':a', unpack(gone))
    local left = 0
    for _, a in ipairs(amounts) do left = left + tonumber(a or '0') end
    redis.call('DECRBY', base .. ':u', left)
    redis.call('HDEL', base .. ':a', unpack(gone))
    redis.call('ZREMRANGEBYSCORE', base .. ':z', '-inf', edge)
  end
  local reset = cjson.null
  local first = redis.call('ZRANGE', base .. ':z', 0, 0, 'WITHSCORES')
  if first[2] then reset = tonumber(first[2]) + span end
  return base, tonumber(redis.call('GET', base .. ':u') or '0'), reset, span
end
`

/**
 * Runs inside the admission script with `now`, `at`, `minute_ms`, `day_ms` and `refuse` in scope.
 * ARGV[10] the charge (JSON: ChargeRequest + `periods`), ARGV[11] the account's key prefix,
 * ARGV[12] the key id, ARGV[13] the reservation handle. Sets `charged` (JSON) or returns a refusal.
 */
export const CHARGE_LUA = `${ROW_USE_LUA}
local charged = ''
if ARGV[10] and ARGV[10] ~= '' then
  local c = cjson.decode(ARGV[10])
  local pre, keyid, handle = ARGV[11], ARGV[12], ARGV[13]
  local inp, want = tonumber(c.inputTokens), tonumber(c.wantOutput)
  local floor = math.min(want, 256)
  local pin, pout = 0, 0
  if type(c.price) == 'table' then pin, pout = tonumber(c.price.input), tonumber(c.price.output) end
  local out, clamp = want, cjson.null
  local states, keys = {}, {}
  -- A request row's refusal, kept while the other request rows are checked (they come first): the
  -- one that admits last is the answer (DESIGN §5: retry-after until a request would be admitted).
  local refusal = nil
  for i, r in ipairs(c.rows) do
    if refusal and r.resource ~= 'requests' then
      refusal[9] = refuse()
      return refusal
    end
    local key, used, reset, span = row_use(r, pre, keyid, c.periods, at, minute_ms, day_ms)
    keys[i] = key
    local left = math.max(0, r.capacity - used)
    states[i] = { used = used, remaining = left, reset = reset }
    local fits, needs, least = 0, 0, floor
    if r.resource == 'requests' then
      fits, needs, least = -1, 1, 0
      if left >= 1 then fits = want end
    elseif r.resource == 'tokens' then
      fits, needs = left - inp, inp + floor
    else
      local money = left * 1000000 - inp * pin
      if money < 0 then fits = -1 elseif pout == 0 then fits = want else fits = math.floor(money / pout) end
      needs = math.ceil((inp * pin + floor * pout) / 1000000)
    end
    if fits < least then
      local retry = cjson.null
      if r.window == 'period' then retry = reset
      elseif needs <= r.capacity then
        local free = r.capacity - used
        local inside = redis.call('ZRANGE', keys[i] .. ':z', 0, -1, 'WITHSCORES')
        for j = 1, #inside, 2 do
          local a = 1
          if r.resource ~= 'requests' then a = tonumber(redis.call('HGET', keys[i] .. ':a', inside[j]) or '0') end
          free = free + a
          if free >= needs then retry = tonumber(inside[j + 1]) + span break end
        end
        if retry == cjson.null then retry = at + span end
      end
      local w = 'day'
      if r.window == 'minute' then w = 'minute' end
      local rv = retry
      if rv == cjson.null then rv = at end
      if r.resource ~= 'requests' then
        return { 0, w, rv, now, m_used, m_first, d_used, d_first, refuse(),
          cjson.encode({ ok = false, i = i - 1, used = used, remaining = left, reset = reset, needs = needs, retry = retry }) }
      end
      if refusal == nil or rv > refusal[3] then
        refusal = { 0, w, rv, now, m_used, m_first, d_used, d_first, -1,
          cjson.encode({ ok = false, i = i - 1, used = used, remaining = left, reset = reset, needs = needs, retry = retry }) }
      end
    end
    if r.resource ~= 'requests' and fits < out then
      out = fits
      local w = r.window
      if w == 'period' then w = r.period end
      clamp = r.scope .. ':' .. r.resource .. ':' .. w
    end
  end
  if refusal then
    refusal[9] = refuse()
    return refusal
  end
  local tokens = inp + out
  local micros = math.ceil((inp * pin + out * pout) / 1000000)
  local settles, spends = false, {}
  for i, r in ipairs(c.rows) do
    local amount = micros
    if r.resource == 'requests' then amount = 1 elseif r.resource == 'tokens' then amount = tokens end
    if r.resource ~= 'requests' then settles = true end
    if r.window == 'period' then
      redis.call('INCRBY', keys[i], amount)
      redis.call('PEXPIREAT', keys[i], c.periods[r.period][2] + day_ms)
      spends[#spends + 1] = keys[i]
    else
      local span = minute_ms
      if r.window == 'day' then span = day_ms end
      redis.call('ZADD', keys[i] .. ':z', string.format('%d', at), handle)
      redis.call('HSET', keys[i] .. ':a', handle, amount)
      redis.call('INCRBY', keys[i] .. ':u', amount)
      for _, s in ipairs({ ':z', ':a', ':u' }) do redis.call('PEXPIRE', keys[i] .. s, span * 2) end
    end
  end
  if settles then
    local windows = {}
    for i, r in ipairs(c.rows) do
      if r.resource == 'tokens' and r.window ~= 'period' then windows[#windows + 1] = keys[i] end
    end
    redis.call('HSET', pre .. 'res', handle, cjson.encode({ t = tokens, m = micros, w = windows, s = spends, at = at }))
    redis.call('PEXPIRE', pre .. 'res', day_ms * 2)
  end
  charged = cjson.encode({ ok = true, tokens = tokens, micros = micros, out = out, clamp = clamp, states = states })
end
`

/**
 * Moves a reservation's hold (`res` entry `r` of `handle`) by `dt` tokens and `dm` micro-dollars in
 * every window that still holds it and in its spend counters: settling, and growing, alike.
 */
const MOVE_HOLD_LUA = `
local function move_hold(r, handle, dt, dm)
  for _, base in ipairs(r.w) do
    if dt ~= 0 and redis.call('HEXISTS', base .. ':a', handle) == 1 then
      redis.call('HINCRBY', base .. ':a', handle, dt)
      redis.call('INCRBY', base .. ':u', dt)
    end
  end
  if dm ~= 0 then
    for _, k in ipairs(r.s) do
      if redis.call('EXISTS', k) == 1 then redis.call('INCRBY', k, dm) end
    end
  end
end
`

/**
 * Settles one reservation once. KEYS[1] the account's `res` hash, KEYS[2] its `built` marker.
 * ARGV: 1 handle, 2 tokens, 3 micro-dollars. Returns 1 when it settled (its hold deleted, in the
 * same atomic step: a second run finds none), 0 when it was settled already (or expired), 2 when
 * Redis holds none of the account's state (no marker): the database's row is then its only hold.
 */
export const SETTLE_SCRIPT = `${MOVE_HOLD_LUA}
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then
  if redis.call('EXISTS', KEYS[2]) == 0 then return 2 end
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
local r = cjson.decode(rec)
-- A negative amount: as reserved (the sweep's settlement of a reservation nobody settled).
local nt, nm = tonumber(ARGV[2]), tonumber(ARGV[3])
if nt < 0 then nt = r.t end
if nm < 0 then nm = r.m end
local dt = nt - r.t
local dm = nm - r.m
move_hold(r, ARGV[1], dt, dm)
return 1
`

/**
 * A money row's use for a hold's growth: the spend counter the hold charged (`res.s`), its
 * admission's period — the current one or the one before (`c.periods`, `c.before`), where its
 * growth goes — and that period's end. A hold of an older period, or whose counter is gone (a
 * rebuild keeps the current periods' only), reads full: it grows no more.
 */
const HELD_SPEND_LUA = `
local function held_spend(r, res, pre, keyid, c)
  local sc = 'a'
  if r.scope == 'key' then sc = 'k:' .. keyid end
  local base = pre .. 'sp:' .. sc .. ':' .. r.period .. ':'
  for _, k in ipairs(res.s) do
    if string.sub(k, 1, #base) == base and redis.call('EXISTS', k) == 1 then
      local start = tonumber(string.sub(k, #base + 1))
      for _, p in ipairs({ c.periods[r.period], c.before[r.period] }) do
        if p[1] == start then return tonumber(redis.call('GET', k)), p[2] end
      end
    end
  end
  return r.capacity, cjson.null
end
`

/**
 * Grows one live reservation, all or nothing (`Limiter.extend`, DESIGN §11). KEYS[1] the account's
 * `res` hash. ARGV: 1 handle, 2 tokens, 3 micro-dollars, 4 the rows (JSON: LimitRow[], `periods`
 * holding now and the ones `before` them), 5 the account's key prefix, 6 the key id, 7 minute span
 * ms, 8 day span ms, 9 now ms (-1 = the server's TIME). Each window row's use is read as the
 * admission reads it (windows moved to their edges), each money row's in the period the hold was
 * admitted in (`held_spend`: past a period's edge the old period's budget bounds its growth, not
 * the new one's); when every token row leaves `tokens` and every money row `micros`, the
 * reservation's amounts grow in every window that still holds it and in its spend counters, as
 * the settle script moves them, and its `res` entry with them (settlement and the sweep then work
 * from the grown hold). Returns JSON `{ ok, live, states, at }` (states before).
 */
export const EXTEND_SCRIPT = `${ROW_USE_LUA}${MOVE_HOLD_LUA}${HELD_SPEND_LUA}
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return cjson.encode({ ok = false, live = false, states = {} }) end
local res = cjson.decode(rec)
local dt, dm = tonumber(ARGV[2]), tonumber(ARGV[3])
local c = cjson.decode(ARGV[4])
local pre, keyid = ARGV[5], ARGV[6]
local minute_ms, day_ms = tonumber(ARGV[7]), tonumber(ARGV[8])
local now = tonumber(ARGV[9])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local states, ok = {}, true
for i, r in ipairs(c.rows) do
  local _, used, reset
  if r.window == 'period' then used, reset = held_spend(r, res, pre, keyid, c)
  else _, used, reset = row_use(r, pre, keyid, c.periods, now, minute_ms, day_ms) end
  local left = math.max(0, r.capacity - used)
  states[i] = { used = used, remaining = left, reset = reset }
  if (r.resource == 'tokens' and left < dt) or (r.resource == 'microdollars' and left < dm) then ok = false end
end
if not ok then return cjson.encode({ ok = false, live = true, states = states, at = now }) end
move_hold(res, ARGV[1], dt, dm)
res.t = res.t + dt
res.m = res.m + dm
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(res))
return cjson.encode({ ok = true, live = true, states = states, at = now })
`
