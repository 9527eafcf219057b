/**
 * @module
 * Rebuilds one account's admission state in Redis from what the database holds (DESIGN §7, §11),
 * after Redis lost it: a restart without AOF, `FLUSHALL`, a failover to an empty replica. The
 * admission script (admit-script.ts) admits nothing for an account without its `built` marker;
 * the gateway reads the account's rows (postgres/usage.ts `chargeHistory`), shapes them
 * (rebuild.ts) and runs this script, which writes the state and the marker in one atomic step —
 * unless the marker is there already (another replica rebuilt it first, and may have admitted
 * since): then it changes nothing, so two replicas never count the same rows twice.
 *
 * KEYS: none (every key is under the account's prefix, one hash slot). ARGV: 1 the account's key
 * prefix, 2 the state (JSON, rebuild.ts `RebuildState`), 3 the marker's lifetime (ms).
 * Returns 1 when it built the state, 0 when it was built already.
 */
export const REBUILD_SCRIPT = `
local pre = ARGV[1]
if redis.call('EXISTS', pre .. 'built') == 1 then return 0 end
local s = cjson.decode(ARGV[2])
local log = pre .. 'log'
redis.call('DEL', log, pre .. 'seq', pre .. 'res')
for i, t in ipairs(s.log) do redis.call('ZADD', log, string.format('%d', t), i) end
if #s.log > 0 then
  redis.call('SET', pre .. 'seq', #s.log, 'PX', s.keep)
  redis.call('PEXPIRE', log, s.keep)
end
for _, w in ipairs(s.windows) do
  local z, a, u = w.base .. ':z', w.base .. ':a', w.base .. ':u'
  redis.call('DEL', z, a, u)
  local sum = 0
  for _, e in ipairs(w.m) do
    redis.call('ZADD', z, string.format('%d', e[2]), e[1])
    redis.call('HSET', a, e[1], e[3])
    sum = sum + e[3]
  end
  if #w.m > 0 then
    redis.call('SET', u, string.format('%d', sum), 'PX', w.ttl)
    redis.call('PEXPIRE', z, w.ttl)
    redis.call('PEXPIRE', a, w.ttl)
  end
end
for _, p in ipairs(s.spend) do
  redis.call('SET', p[1], string.format('%d', p[2]))
  redis.call('PEXPIREAT', p[1], p[3])
end
for _, r in ipairs(s.res) do
  redis.call('HSET', pre .. 'res', r.h, cjson.encode({ t = r.t, m = r.m, w = r.w, s = r.s, at = r.at }))
end
if #s.res > 0 then redis.call('PEXPIRE', pre .. 'res', s.resTtl) end
redis.call('SET', pre .. 'built', '1', 'PX', tonumber(ARGV[3]))
return 1
`
