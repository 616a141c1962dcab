--[[
  Which of a load chunk's jobs exist (src/batch/redis-load-context.ts).

    Input:
      KEYS[1..n] the jobs' hashes

    Output:
      {exists_1, ..., exists_n}: 1 or 0 each
]]
local r = {}
for i, key in ipairs(KEYS) do r[i] = redis.call('EXISTS', key) end
return r
