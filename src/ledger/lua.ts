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
`;
