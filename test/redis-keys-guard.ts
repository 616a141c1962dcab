/**
 * vitest's globalSetup: the integration tests share one Redis, and each must delete the keys
 * it creates (test/helpers/redis.ts). Every prefix the run hands out is noted in a file;
 * after the run, keys still under one of them fail it, naming the prefixes, so a test that
 * forgets its clean-up is caught where it was written. Without a Redis (unit tests on a
 * machine without one) there is nothing to check.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { keysOf, PREFIXES_FILE_VARIABLE, REDIS_URL } from './helpers/redis.js';

export default function setup(): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'realty-test-prefixes-'));
  const file = join(dir, 'prefixes');
  // Set before the test processes start: they inherit it.
  process.env[PREFIXES_FILE_VARIABLE] = file;
  return async () => {
    let prefixes: string[] = [];
    try {
      prefixes = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
    } catch {
      // No test asked for a prefix.
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    if (prefixes.length === 0) return;
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
    } catch {
      return;
    }
    try {
      const left: string[] = [];
      for (const prefix of prefixes) {
        const keys = await keysOf(redis, prefix);
        if (keys.length > 0) left.push(`${prefix} (${keys.length} keys, e.g. ${keys[0]})`);
      }
      if (left.length > 0) {
        // vitest reports an error thrown here but still exits 0: the exit code is set instead.
        console.error(
          `Tests left keys in Redis under ${left.length} of the ${prefixes.length} prefixes they made: ${left.join('; ')}. Delete them (deletePrefix) in the test's afterEach or afterAll.`,
        );
        process.exitCode = 1;
      }
    } finally {
      redis.disconnect();
    }
  };
}
