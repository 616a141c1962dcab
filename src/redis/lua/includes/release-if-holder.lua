--[[
  Deletes a token lock when it is still the holder's.
    key:   the lock's key
    token: the holder's token
  Returns 1 when deleted, 0 when the lock is no longer this token's (left as it is).
]]
local function releaseIfHolder(key, token)
  if redis.call('GET', key) == token then return redis.call('DEL', key) end
  return 0
end
