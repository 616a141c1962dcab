/**
 * Which of a batch's files are uploaded already: sha256 → content id, one hash per batch,
 * expiring with the batch's keys (its `expiresAt`, else the default retention). An upload is
 * claimed first (SET NX with an expiry): two workers holding rows with the same agreement
 * upload it once; a worker that dies holding a claim lets it lapse after `claimMs`.
 */
import { DEFAULT_RETENTION_MS } from '../batch/batch-store.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { luaFile } from '../redis/lua.js';
import { tokenLock } from '../redis/token-lock.js';

export interface ContentStore {
  /** The content id these bytes were uploaded as in this batch, if they were. */
  known(batch: string, sha256: string): Promise<string | undefined>;
  /** True when this caller may upload these bytes now (nobody else is). */
  claim(batch: string, sha256: string, token: string, claimMs: number): Promise<boolean>;
  /** Remembers the upload for the batch's life, and lets go of the claim. */
  remember(batch: string, sha256: string, contentId: string, token: string): Promise<void>;
  /** Lets go of the claim (the upload failed). */
  release(batch: string, sha256: string, token: string): Promise<void>;
}

/** Its input and output: src/redis/lua/content-remember.lua. */
const REMEMBER = luaFile('content-remember');

export function createContentStore(redis: Redis, keys: Keys): ContentStore {
  return {
    async known(batch, sha256) {
      return (await redis.hget(keys.contents(batch), sha256)) ?? undefined;
    },
    async claim(batch, sha256, token, claimMs) {
      return tokenLock(redis, keys.contentClaim(batch, sha256), claimMs, token).acquire();
    },
    async remember(batch, sha256, contentId, token) {
      await REMEMBER.run(
        redis,
        [keys.contents(batch), keys.batch(batch), keys.contentClaim(batch, sha256)],
        [sha256, contentId, DEFAULT_RETENTION_MS, token],
      );
    },
    async release(batch, sha256, token) {
      // The claim's life does not matter to letting it go.
      await tokenLock(redis, keys.contentClaim(batch, sha256), 0, token).release();
    },
  };
}
