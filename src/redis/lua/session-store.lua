--[[
  Stores the fleet's session of a login, unless a newer generation is stored already
  (src/redis/fleet-session.ts).

    Input:
      KEYS[1] the fleet's session hash (`gen`, `box`, `failed`)
      ARGV[1] the login's generation
      ARGV[2] the sealed session
      ARGV[3] how long it is kept, in milliseconds

    Output:
      1 stored; 0 a generation as new or newer was there
]]
local current = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0')
if current >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'gen', ARGV[1], 'box', ARGV[2])
redis.call('HDEL', KEYS[1], 'failed')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
