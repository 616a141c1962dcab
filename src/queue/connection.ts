/**
 * Redis connections. BullMQ wants `maxRetriesPerRequest: null` on the
 * connections its workers block on: without it a worker dies on the first
 * reconnect instead of waiting for Redis to come back.
 */
import { Redis } from 'ioredis';
import pRetry from 'p-retry';
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

/**
 * Connects and pings, trying a few times (a compose worker may start a moment
 * before its Redis), or throws one clear sentence that names the url without
 * its password.
 */
export async function connectRedis(url: string, options: ConnectOptions & { timeoutMs?: number; retries?: number } = {}): Promise<Redis> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const attempt = async (): Promise<Redis> => {
    const redis = createRedis(url, options);
    // The socket's own error (ECONNREFUSED, NOAUTH) says more than the rejected connect; and an
    // unhandled 'error' event would crash the process.
    let socketError: Error | undefined;
    redis.on('error', (e: Error) => (socketError ??= e));
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        redis.connect().then(() => redis.ping()),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return redis;
    } catch (err) {
      redis.disconnect();
      throw socketError ?? err;
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    return await pRetry(attempt, { retries: options.retries ?? 3, minTimeout: 250, factor: 2 });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new RedisUnavailableError(`Redis is not reachable at ${safeUrl(url)} (${reason}); start it or set REDIS_URL.`, { cause: err });
  }
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

/** ioredis gave up on a command because Redis is away (refused, closed, reset). */
export function isRedisOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    /Connection is closed|Command aborted due to connection close|ECONNREFUSED|ECONNRESET|EPIPE|Stream isn't writeable/.test(err.message) ||
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes((err as NodeJS.ErrnoException).code ?? '')
  );
}
