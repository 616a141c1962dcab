/**
 * `--rate N`: gateway requests per second across every worker on every host.
 * One Redis key counts the requests of the current second of Redis' own clock
 * (so hosts with drifting clocks share one window); a request over the budget
 * gets the milliseconds left in that second, and the worker hands them to
 * BullMQ's limiter (`worker.rateLimit`), which stops it fetching jobs meanwhile.
 */
import type { RedisClient as Redis } from '../redis/connection.js';

export interface RateGrant {
  /** 0 when the request may go now; otherwise how long until the next second. */
  waitMs: number;
  /** The Redis second the request was counted in (or refused for). */
  second: number;
}

export interface RequestLimiter {
  take(): Promise<RateGrant>;
}

// One key, declared, so the script is valid on Redis Cluster.
const TAKE = `
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
`;

export function createRequestLimiter(redis: Redis, key: string, perSecond: number): RequestLimiter {
  return {
    async take() {
      const [waitMs, second] = (await redis.eval(TAKE, 1, key, String(perSecond))) as [number, number];
      return { waitMs: waitMs > 0 ? Math.max(1, waitMs) : 0, second };
    },
  };
}
