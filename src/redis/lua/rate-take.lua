--[[
  Takes one of this second's gateway requests for the fleet (`--rate`, src/worker/rate-limit.ts),
  the second on Redis' clock.

    Input:
      KEYS[1] the rate's key (`<second>:<count>`)
      ARGV[1] requests a second

    Output:
      {wait, second}: wait 0 when taken, else the milliseconds to the next second; the second taken in
]]
local t = redis.call('TIME')
local now = tonumber(t[1])
local count = 0
local v = redis.call('GET', KEYS[1])
if v then
  local s, c = string.match(v, '(%d+):(%d+)')
  if tonumber(s) == now then count = tonumber(c) end
end
if count >= tonumber(ARGV[1]) then
  return {1000 - math.floor(tonumber(t[2]) / 1000), now}
end
redis.call('SET', KEYS[1], now .. ':' .. (count + 1), 'PX', 2000)
return {0, now}
