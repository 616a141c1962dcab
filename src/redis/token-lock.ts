/**
 * A lock that one process holds by a token in one Redis key: taken with `SET NX PX`, renewed
 * and let go only by its holder (a compare of the token in the same script), so a holder that
 * stalled past its expiry never renews or deletes the lock another process took since. The feed
 * follower, a schedule's tick, the fleet's login and an upload's claim on a file each hold one.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient as Redis } from './connection.js';
import { luaFile } from './lua.js';

const RENEW = luaFile('token-renew');
const RELEASE = luaFile('token-release');

export interface TokenLock {
  readonly key: string;
  readonly token: string;
  /** Takes the lock for `ms` when nobody holds it: whether it is now this token's. */
  acquire(): Promise<boolean>;
  /** Extends it by `ms` while it is still this token's: false once another holds it, or nobody. */
  renew(): Promise<boolean>;
  /** Lets it go if it is still this token's; never throws (an expired lock frees itself). */
  release(): Promise<void>;
}

export function tokenLock(redis: Redis, key: string, ms: number, token: string = randomUUID()): TokenLock {
  return {
    key,
    token,
    async acquire() {
      return (await redis.set(key, token, 'PX', ms, 'NX')) === 'OK';
    },
    async renew() {
      return (await RENEW.run(redis, [key], [token, ms])) === 1;
    },
    async release() {
      await RELEASE.run(redis, [key], [token]).catch(() => undefined);
    },
  };
}
