/**
 * Lua functions shared by the scripts that keep a batch's work in Redis around the ledger's
 * decisions (the claim's first step and the holder check here, the outcome's write in
 * src/outcomes/store.ts, the rows the feed settles in src/feed/feed-store.ts). The ledger
 * itself is in the database (src/ledger/rows.ts): nothing here decides whether a deal is sent.
 */

export const LEDGER_LUA = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Never shortens a key's life: it lives at least until its batch's expiresAt.
local function extend(key, batch_key, now)
  local exp = tonumber(redis.call('HGET', batch_key, 'expiresAt') or '')
  if not exp then return end
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or (ttl >= 0 and now + ttl < exp) then redis.call('PEXPIREAT', key, exp) end
end
-- A row's stored outcome (src/outcomes/outcome-codec.ts): an array by position. Its outcome's name:
local function outcome_of(raw)
  return cjson.decode(raw)[2]
end
-- A row that ended ERR_UNCERTAIN learns its try's docflow (the feed found it, or an operator
-- named it). False when the row has no outcome yet.
local function settle_uncertain(okey, row, outcome, docflow_id, message)
  local raw = redis.call('HGET', okey, row)
  if not raw then return false end
  local o = cjson.decode(raw)
  if o[8] ~= 'ERR_UNCERTAIN' then return true end
  o[2], o[3], o[5], o[8], o[9] = outcome, docflow_id, outcome == 'queued' and 200 or 201, cjson.null, message
  redis.call('HSET', okey, row, cjson.encode(o))
  return true
end
`;
