/**
 * One connection for one command: connect, run, always let go, whatever the
 * command did. Every command that needs Redis goes through here.
 */
import type { ConnectOptions, RedisClient } from '../redis/connection.js';
import type { Env } from './environment.js';

/** How long a polite QUIT may take before the socket is simply closed. */
const QUIT_MS = 1000;

/**
 * Connects to the configured Redis, runs `fn` with the connection and closes it: QUIT
 * (replies still owed arrive first), or, when that fails, does not answer in a second or
 * the connection is not up (Redis went away: QUIT would wait in the offline queue for
 * ever), a plain disconnect. `failFast` (the default) makes commands error while Redis
 * is away; long-running commands (`run`, `work`, `track`) give `failFast: false` and
 * wait for it to come back.
 */
export async function withRedis<T>(
  env: Env,
  fn: (redis: RedisClient) => Promise<T>,
  options: ConnectOptions = { failFast: true },
): Promise<T> {
  const redis = await env.connect(env.config.redis, options);
  try {
    return await fn(redis);
  } finally {
    await close(redis);
  }
}

async function close(redis: RedisClient): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.quit(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`QUIT had no answer in ${QUIT_MS} ms`)), QUIT_MS);
      }),
    ]);
  } catch {
    // Closing is all that is left to do: an error here must not hide the command's own.
    redis.disconnect();
  } finally {
    clearTimeout(timer);
  }
}
