/**
 * The operations page: Bull Board for the deals queue at `/queues`, the
 * batches with their files at `/batches`, Prometheus metrics at `/metrics`,
 * every route behind the same credentials.
 */
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { RedisClient as Redis } from '../redis/connection.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Keys } from '../redis/keys.js';
import { basicAuth, type Credentials } from './auth.js';
import { batchesRoutes } from './batches.js';
import { bullBoardPlugin, refuseUnsafeActions } from './board.js';
import { createLoginThrottle, type LoginThrottleOptions } from './login-throttle.js';
import { createDashboardMetrics } from './metrics.js';
import { refuseForeignOrigin, SECURITY_HEADERS, securityHeaders } from './security.js';

export const BOARD_PATH = '/queues';
export const BATCHES_PATH = '/batches';

export interface DashboardOptions {
  /** The caller's connection; it stays open after `close()`. */
  redis: Redis;
  keys: Keys;
  host: string;
  /** 0: any free port (the url says which). */
  port: number;
  /** Required on every route when given; only `--no-auth` on 127.0.0.1 goes without. */
  credentials?: Credentials | undefined;
  readOnly?: boolean;
  /**
   * The origin the page is served from (`--public-url`, e.g. behind a proxy
   * doing TLS): the only one allowed to change anything. Without it, the
   * request's own scheme and Host.
   */
  publicOrigin?: string | undefined;
  /** Lock-out after wrong credentials (10 in 60 s lock an address for 60 s); tests shorten it. */
  loginThrottle?: Omit<LoginThrottleOptions, 'logger'>;
  logger?: Logger;
}

export interface RunningDashboard {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  app: FastifyInstance;
  /** Stops listening, then closes the dashboard's queue (not the Redis connection). */
  close(): Promise<void>;
}

export function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

export async function startDashboard(options: DashboardOptions): Promise<RunningDashboard> {
  const { redis, keys, logger } = options;
  const queue = new Queue(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
  queue.on('error', (err) => logger?.error({ err: { message: err.message } }, 'dashboard queue error'));
  // fastify's own request log would add nothing operations need; errors go to our logger.
  const app = Fastify({
    logger: false,
    // A path fastify cannot decode never reaches the hooks: answered here, with the same headers and no echo of the path.
    frameworkErrors: (_err, _request, reply: FastifyReply) => {
      void reply.code(400).headers(SECURITY_HEADERS).type('text/plain; charset=utf-8').send('The dashboard cannot read that address.\n');
    },
  });

  // Hooks first: they then cover every route registered below, Bull Board's included,
  // and the 404s. Headers before anything can answer, so every answer carries them.
  app.addHook('onRequest', securityHeaders);
  if (options.credentials)
    app.addHook('onRequest', basicAuth(options.credentials, createLoginThrottle({ ...options.loginThrottle, logger })));
  app.addHook('onRequest', refuseForeignOrigin({ publicOrigin: options.publicOrigin }));
  app.addHook('onRequest', refuseUnsafeActions(BOARD_PATH, queue));
  // fastify's own 404 repeats the method and the path it was given; this says one fixed sentence.
  app.setNotFoundHandler(async (_request, reply) =>
    reply.code(404).type('text/plain; charset=utf-8').send('There is no such page on the realty-batch dashboard.\n'),
  );

  await app.register(bullBoardPlugin({ queue, basePath: BOARD_PATH, readOnly: options.readOnly ?? false, batchesPath: BATCHES_PATH }), {
    prefix: BOARD_PATH,
  });
  await app.register(batchesRoutes({ redis, keys, boardPath: BOARD_PATH, ...(logger && { logger }) }));

  const metrics = createDashboardMetrics(redis, keys, queue);
  app.get('/metrics', async (_request, reply) => {
    try {
      const text = await metrics.metrics();
      return await reply.type(metrics.contentType).header('cache-control', 'no-store').send(text);
    } catch (err) {
      logger?.error({ err: { message: (err as Error).message } }, 'metrics could not be read');
      return reply.code(503).type('text/plain; charset=utf-8').send('The metrics could not be read from Redis.\n');
    }
  });
  app.get('/', async (_request, reply) => reply.redirect(BATCHES_PATH));

  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (err) {
    await app.close().catch(() => undefined);
    await queue.close().catch(() => undefined);
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`The dashboard cannot listen on ${options.host}:${options.port} (${reason}); give another --port or --host.`, {
      cause: err,
    });
  }
  const url = urlOf(app.server.address() as AddressInfo);
  return {
    url,
    app,
    async close() {
      await app.close();
      await queue.close();
    },
  };
}
