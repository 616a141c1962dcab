--[[
  Extends a token lock's life while it is still the holder's (src/redis/token-lock.ts).

    Input:
      KEYS[1] the lock
      ARGV[1] the holder's token
      ARGV[2] its new life, in milliseconds

    Output:
      1 renewed; 0 the lock is no longer this token's
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
