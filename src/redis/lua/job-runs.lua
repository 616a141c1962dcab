--[[
  Whether a deal's holder job still runs (src/ledger/ledger.ts): it exists and is not finished.
  Whether its row has an outcome is the database's to say.

    Input:
      KEYS[1] the holder's job hash

    Output:
      1 while it exists unfinished; 0 otherwise
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return 1 - redis.call('HEXISTS', KEYS[1], 'finishedOn')
