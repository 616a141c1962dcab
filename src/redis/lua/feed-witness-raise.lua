--[[
  Raises the fleet's witness of how far it saw its database's feed (src/ledger/restore.ts): set
  anew for another database, raised only for the same one.

    Input:
      KEYS[1] the witness hash (`db`, `items`)
      ARGV[1] the database's id
      ARGV[2] the feed items it holds

    Output:
      0
]]
local db = redis.call('HGET', KEYS[1], 'db')
local items = tonumber(redis.call('HGET', KEYS[1], 'items') or '-1')
if db ~= ARGV[1] or tonumber(ARGV[2]) > items then
  redis.call('HSET', KEYS[1], 'db', ARGV[1], 'items', ARGV[2])
end
return 0
