--[[
  Keeps the cadastral number suggest found for a row until its outcome (src/ledger/ledger.ts): a
  job put back before its claim does not ask suggest again.

    Input:
      KEYS[1] the batch's checkpoints hash (row -> cadastral number)
      KEYS[2] the batch's hash (`expiresAt`)
      ARGV[1] the row
      ARGV[2] the cadastral number

    Output:
      0
]]
--- @include "includes/now-ms"
--- @include "includes/extend"
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
extend(KEYS[1], KEYS[2], now_ms())
return 0
