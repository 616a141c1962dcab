/**
 * A Lua script sent by its SHA1 (EVALSHA), and in full once when the server has
 * not seen it (a new or restarted server): no per-call script text on the wire,
 * and no `defineCommand` on a connection BullMQ shares (every pipeline made on it
 * copies each defined command).
 */
import { createHash } from 'node:crypto';
import type { RedisClient as Redis } from './connection.js';

export interface LuaScript {
  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

export function luaScript(source: string): LuaScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return redis.eval(source, keys.length, ...keys, ...args);
      }
    },
  };
}
