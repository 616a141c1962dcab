/**
 * `--rate N`: gateway requests per second across every worker on every host.
 * One Redis key counts the requests of the current second of Redis' own clock
 * (so hosts with drifting clocks share one window); a request over the budget
 * gets the milliseconds left in that second, and the worker hands them to
 * BullMQ's limiter (`worker.rateLimit`), which stops it fetching jobs meanwhile.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import { luaFile } from '../redis/lua.js';

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
const TAKE = luaFile('rate-take');

export function createRequestLimiter(redis: Redis, key: string, perSecond: number): RequestLimiter {
  return {
    async take() {
      const [waitMs, second] = (await TAKE.run(redis, [key], [String(perSecond)])) as [number, number];
      return { waitMs: waitMs > 0 ? Math.max(1, waitMs) : 0, second };
    },
  };
}
