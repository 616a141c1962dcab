/** Each integration test gets its own key prefix on the shared Redis, and removes its keys after. */
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Where this run's prefixes are noted, one a line (test/redis-keys-guard.ts sets it): after
 * the run, keys left under one of them fail the run. Other runs on the same Redis are not
 * counted against this one.
 */
export const PREFIXES_FILE_VARIABLE = 'REALTY_TEST_PREFIXES_FILE';

export function uniquePrefix(label: string): string {
  const prefix = `test-${label}-${randomBytes(4).toString('hex')}`;
  const noted = process.env[PREFIXES_FILE_VARIABLE];
  if (noted) appendFileSync(noted, `${prefix}\n`);
  return prefix;
}

/** Every key the tool writes under `prefix` (all under its hash tag, src/redis/keys.ts). */
export async function keysOf(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

export async function deletePrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await keysOf(redis, prefix);
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  } finally {
    redis.disconnect();
  }
}
