--[[
  Gives a batch's keys their expiry (src/batch/batch-store.ts): none shortened, the profile
  dropped when asked; the time on Redis' clock.

    Input:
      KEYS[1] the batch's hash
      KEYS[2..] its other keys
      ARGV[1] the expiry, ms since the epoch
      ARGV[2] '1' to drop the batch's profile now

    Output:
      0
]]
local exp = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[2] == '1' then redis.call('HDEL', KEYS[1], 'profile') end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'expiresAt', exp) end
for i = 1, #KEYS do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl == -1 or (ttl >= 0 and now + ttl < exp) then redis.call('PEXPIREAT', KEYS[i], exp) end
end
return 0
