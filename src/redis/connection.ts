/**
 * Redis connections: one server (`REDIS_URL`, `rediss://` for TLS, credentials in the
 * url), Redis Cluster (`REDIS_CLUSTER_NODES`) or Sentinel (`REDIS_SENTINELS` with
 * `REDIS_SENTINEL_NAME`). BullMQ wants `maxRetriesPerRequest: null` on the
 * connections its workers block on: without it a worker dies on the first
 * reconnect instead of waiting for Redis to come back.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import pRetry from 'p-retry';
import { ConfigError, RedisUnavailableError } from '../errors.js';

/**
 * A connection to a single Redis or to a cluster: every key the project writes
 * shares one hash tag, so every command it sends works on both.
 */
export type RedisClient = Redis | Cluster;

export interface RedisTarget {
  /** `redis://[user:password@]host:port[/db]` or `rediss://...` (TLS). */
  url: string;
  /** Cluster seed nodes, `host:port`; the url's credentials and TLS apply to each. */
  clusterNodes?: readonly string[];
  /** Sentinels, `host:port`, and the name of the master they watch. */
  sentinels?: readonly string[];
  sentinelName?: string;
  /** The sentinels' own password, when they ask for one. */
  sentinelPassword?: string;
}

export interface ConnectOptions {
  /** Fail fast (commands error while Redis is away) instead of queueing them: for `load`, `results`, `status`. */
  failFast?: boolean;
}

const hostPort = (node: string): { host: string; port: number } => {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
};

/** The url's credentials, TLS and database as ioredis options, for cluster nodes and sentinel masters. */
function optionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const options: RedisOptions = {};
  if (u.username) options.username = decodeURIComponent(u.username);
  if (u.password) options.password = decodeURIComponent(u.password);
  if (u.protocol === 'rediss:') options.tls = {};
  const db = Number(u.pathname.slice(1));
  if (Number.isInteger(db) && db > 0) options.db = db;
  return options;
}

export function createRedis(target: RedisTarget | string, options: ConnectOptions = {}): RedisClient {
  const t: RedisTarget = typeof target === 'string' ? { url: target } : target;
  const common = {
    maxRetriesPerRequest: options.failFast ? 1 : null,
    enableOfflineQueue: true,
    // Reconnect every 0.2 s, then up to every 2 s, for ever: a worker outlives a Redis restart.
    retryStrategy: (times: number) => Math.min(200 * times, 2000),
    lazyConnect: true,
    connectionName: 'realty-batch',
  };
  if (t.clusterNodes && t.clusterNodes.length > 0) {
    return new Cluster(t.clusterNodes.map(hostPort), {
      lazyConnect: true,
      enableOfflineQueue: true,
      clusterRetryStrategy: common.retryStrategy,
      redisOptions: { ...optionsFromUrl(t.url), maxRetriesPerRequest: common.maxRetriesPerRequest, connectionName: common.connectionName },
    });
  }
  if (t.sentinels && t.sentinels.length > 0) {
    const fromUrl = optionsFromUrl(t.url);
    return new Redis({
      ...common,
      ...fromUrl,
      sentinels: t.sentinels.map(hostPort),
      name: t.sentinelName ?? 'mymaster',
      // ioredis applies `tls` to the master in sentinel mode only when told to.
      ...(fromUrl.tls ? { enableTLSForSentinelMode: true } : {}),
      ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
    });
  }
  return new Redis(t.url, common);
}

/**
 * Connects and pings, trying a few times (a compose worker may start a moment
 * before its Redis), or throws one clear sentence that names the target without
 * its password.
 */
export async function connectRedis(
  target: RedisTarget | string,
  options: ConnectOptions & { timeoutMs?: number; retries?: number } = {},
): Promise<RedisClient> {
  const t: RedisTarget = typeof target === 'string' ? { url: target } : target;
  const timeoutMs = options.timeoutMs ?? 2000;
  const attempt = async (): Promise<RedisClient> => {
    const redis = createRedis(t, options);
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
    throw new RedisUnavailableError(`Redis is not reachable at ${describeTarget(t)} (${reason}); start it or set REDIS_URL.`, {
      cause: err,
    });
  }
}

/** Where Redis is, for messages: never a password. */
export function describeTarget(t: RedisTarget): string {
  if (t.clusterNodes?.length) return `the cluster ${t.clusterNodes.join(',')}`;
  if (t.sentinels?.length) return `the sentinels ${t.sentinels.join(',')} (master ${t.sentinelName ?? 'mymaster'})`;
  return safeUrl(t.url);
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

/**
 * The ledger is what keeps a deal from being sent twice: a Redis that evicts keys when it
 * is full could drop an entry and let its deal be sent again. `run`, `work` and `load`
 * start only on a Redis (each master of a cluster) whose `maxmemory-policy` is
 * `noeviction`, which makes a full Redis refuse writes loudly instead.
 */
export async function requireNoEviction(redis: RedisClient, target: RedisTarget): Promise<void> {
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    const info = await node.info('memory');
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    if (policy === 'noeviction') continue;
    const where = redis instanceof Cluster ? `the cluster node ${node.options.host}:${node.options.port}` : describeTarget(target);
    throw new ConfigError(
      policy
        ? `Redis at ${where} evicts keys when it is full (maxmemory-policy ${policy}): a ledger entry evicted is a deal sent twice. Set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf).`
        : `Redis at ${where} does not say its maxmemory-policy (INFO memory): it must be noeviction, since a ledger entry evicted is a deal sent twice.`,
    );
  }
}

/** Where a client looks, for messages: `host:port[/db]`, the sentinels' master, or a cluster's nodes. Never its password. */
export function whereIs(redis: RedisClient): string {
  if (redis instanceof Cluster) {
    const nodes = redis.nodes('all').map((n) => `${n.options.host ?? ''}:${n.options.port ?? ''}`);
    return nodes.length > 0 ? `the cluster of ${nodes.join(', ')}` : 'the cluster';
  }
  const o = redis.options;
  if (o.sentinels && o.sentinels.length > 0)
    return `the master ${o.name ?? ''} of the sentinels ${o.sentinels.map((s) => `${s.host ?? ''}:${s.port ?? ''}`).join(', ')}`;
  return `${o.host ?? '127.0.0.1'}:${o.port ?? 6379}${o.db ? `/${o.db}` : ''}`;
}
