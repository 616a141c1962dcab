--[[
  Writes a job's data while this worker still holds the job's lock (src/queue/locked-update.ts).

    Input:
      KEYS[1] the job's hash
      KEYS[2] the job's lock
      ARGV[1] the lock's token this worker holds
      ARGV[2] the job's data, JSON

    Output:
      1 written; 0 the lock is another's, or the job is gone
]]
if redis.call('GET', KEYS[2]) ~= ARGV[1] or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[2])
return 1
