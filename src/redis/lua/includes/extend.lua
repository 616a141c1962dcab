--[[
  Never shortens a key's life: it lives at least until its batch's expiresAt.
    key:       the key
    batch_key: its batch's hash (`expiresAt`, ms since the epoch)
    now:       Redis' clock, ms
]]
local function extend(key, batch_key, now)
  local exp = tonumber(redis.call('HGET', batch_key, 'expiresAt') or '')
  if not exp then return end
  local ttl = redis.call('PTTL', key)
  if ttl == -1 or (ttl >= 0 and now + ttl < exp) then redis.call('PEXPIREAT', key, exp) end
end
