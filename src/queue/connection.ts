/**
 * Redis connections. BullMQ wants `maxRetriesPerRequest: null` on the
 * connections its workers block on: without it a worker dies on the first
 * reconnect instead of waiting for Redis to come back.
 */
import { Redis } from 'ioredis';
import { RedisUnavailableError } from '../errors.js';

export interface ConnectOptions {
  /** Fail fast (commands error while Redis is away) instead of queueing them: for `load`, `results`, `status`. */
  failFast?: boolean;
}

export function createRedis(url: string, options: ConnectOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: options.failFast ? 1 : null,
    enableOfflineQueue: true,
    // Reconnect every 0.2 s, then up to every 2 s, for ever: a worker outlives a Redis restart.
    retryStrategy: (times) => Math.min(200 * times, 2000),
    lazyConnect: true,
    connectionName: 'realty-batch',
  });
}

/** Connects and pings, or throws one clear sentence that names the url without its password. */
export async function connectRedis(url: string, options: ConnectOptions & { timeoutMs?: number } = {}): Promise<Redis> {
  const redis = createRedis(url, options);
  // Errors are reported by the ping below and by ioredis' reconnects; an unhandled 'error' event would crash.
  redis.on('error', () => undefined);
  const timeoutMs = options.timeoutMs ?? 5000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.connect().then(() => redis.ping()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    redis.disconnect();
    const reason = err instanceof Error ? err.message : String(err);
    throw new RedisUnavailableError(`Redis is not reachable at ${safeUrl(url)} (${reason}); start it or set REDIS_URL.`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
  return redis;
}

/** The url without credentials, for messages. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return 'the configured REDIS_URL';
  }
}
