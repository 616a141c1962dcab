--[[
  Lets a token lock go when it is still the holder's (src/redis/token-lock.ts).

    Input:
      KEYS[1] the lock
      ARGV[1] the holder's token

    Output:
      1 deleted; 0 the lock is no longer this token's (left as it is)
]]
--- @include "includes/release-if-holder"
return releaseIfHolder(KEYS[1], ARGV[1])
