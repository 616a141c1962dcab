--[[
  After a row's outcome is committed in the database, its work in Redis (src/outcomes/store.ts):
  its checkpoint and row-index entry go (the outcome names its deal now), and its job loses its
  deal. The job's data is written only while the job exists, as BullMQ's own updateData does.

    Input:
      KEYS[1] the batch's checkpoints hash
      KEYS[2] the row's job hash (or the checkpoints again when no job is written)
      KEYS[3] the batch's row index
      ARGV[1] the row
      ARGV[2] the job's data without its deal, JSON ('' to leave the job be)

    Output:
      0
]]
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
if ARGV[2] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'data', ARGV[2]) end
return 0
