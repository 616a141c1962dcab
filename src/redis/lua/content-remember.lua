--[[
  Remembers an uploaded file's content id for its batch, and lets the upload's claim go
  (src/worker/content-store.ts).

    Input:
      KEYS[1] the batch's contents hash (sha256 -> content id)
      KEYS[2] the batch's hash (its `expiresAt`)
      KEYS[3] the upload's claim (a token lock)
      ARGV[1] the file's sha256
      ARGV[2] its content id
      ARGV[3] the contents' life when the batch has no expiry yet, in milliseconds
      ARGV[4] the claim's token

    Output:
      1
]]
--- @include "includes/release-if-holder"
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local exp = tonumber(redis.call('HGET', KEYS[2], 'expiresAt') or '0') or 0
if exp > 0 then redis.call('PEXPIREAT', KEYS[1], exp) else redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
releaseIfHolder(KEYS[3], ARGV[4])
return 1
