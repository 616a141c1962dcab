/**
 * The operations page: Bull Board for the deals queue at `/queues`, the
 * batches with their files at `/batches`, a deal found and its history at
 * `/deals`, the operators' actions at `/audit`, Prometheus metrics at
 * `/metrics`, every route behind the same credentials. Every change made
 * through it is recorded in the operator actions, with its login.
 */
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import { recordAction } from '../db/operator-actions.js';
import { dealJobId, jobIdParts } from '../queue/job-data.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Keys } from '../redis/keys.js';
import { basicAuth, type Credentials } from './auth.js';
import { auditRoutes } from './audit-page.js';
import { batchesRoutes } from './batches.js';
import { bullBoardPlugin, refuseUnsafeActions } from './board.js';
import { dealsRoutes } from './deals-page.js';
import { createLoginThrottle, type LoginThrottleOptions } from './login-throttle.js';
import { createDashboardMetrics } from './metrics.js';
import { refuseForeignHost, refuseForeignOrigin, SECURITY_HEADERS, securityHeaders } from './security.js';
import type { Lang } from '../config.js';

export const BOARD_PATH = '/queues';
export const BATCHES_PATH = '/batches';
export { AUDIT_PATH, DEALS_PATH } from './deals-page.js';

/** Who an action of the page is recorded as without credentials (`--no-auth`). */
export const ANONYMOUS = 'anonymous';
/** Methods that change nothing: their requests are not actions. */
const READS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
/** A route parameter's value is kept up to this length in an action's detail. */
const MAX_PARAM_TEXT = 200;
/** Bull Board's route parameters as an action's detail names them. */
const PARAM_NAMES: Readonly<Record<string, string>> = { queueName: 'queue', jobId: 'job', queueStatus: 'status', schedulerId: 'scheduler' };

/**
 * What an action names from its address (its route's parameters: the queue, the job, the
 * state; never its body nor its query), and the batch and dealId of a deal job's id.
 */
export function actionOf(request: FastifyRequest): { action: string; detail: string; batch?: string; dealId?: string } | undefined {
  const route = request.routeOptions.url;
  if (route === undefined) return undefined;
  const params = (request.params ?? {}) as Record<string, unknown>;
  const detail = Object.entries(params)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .map(([name, value]) => `${PARAM_NAMES[name] ?? name} ${value.slice(0, MAX_PARAM_TEXT)}`)
    .join(', ');
  const jobId = typeof params.jobId === 'string' ? params.jobId : undefined;
  const parts = jobId === undefined ? undefined : jobIdParts(jobId);
  // Only an id that is a deal job's: another id that happens to hold a dot names no deal.
  const deal = parts && dealJobId(parts.batch, parts.dealId) === jobId ? parts : undefined;
  return { action: `${request.method} ${route}`, detail, ...(deal && { batch: deal.batch, dealId: deal.dealId }) };
}

/**
 * An `onSend` hook recording every request that changed something (a method other than GET,
 * HEAD, OPTIONS on a route, answered below 400: what the hooks and Bull Board refused is not an
 * action) as an operator action of `who`. The answer leaves once the action is recorded, so an
 * operator's actions are recorded in the order they were made and none is answered unrecorded;
 * a failure to record is logged and the request keeps its answer. `pending` holds the writes
 * under way.
 */
function recordActions(db: Database, who: string, pending: Set<Promise<void>>, logger: Logger | undefined) {
  return async <T>(request: FastifyRequest, reply: FastifyReply, payload: T): Promise<T> => {
    if (READS.has(request.method) || reply.statusCode >= 400) return payload;
    const action = actionOf(request);
    if (!action) return payload;
    const write = recordAction(db, { who, ...action })
      .catch((err: unknown) =>
        logger?.error({ err: { message: (err as Error).message }, action: action.action }, 'a dashboard action could not be recorded'),
      )
      .finally(() => pending.delete(write));
    pending.add(write);
    await write;
    return payload;
  };
}

export interface DashboardOptions {
  /** The caller's connection; it stays open after `close()`. */
  redis: Redis;
  keys: Keys;
  /** The system of record, opened by the caller; it stays open after `close()`. */
  db: Database;
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
  /** The language of the attention file and of the results for Excel it hands out (`--lang`; English when not given). */
  lang?: Lang | undefined;
  logger?: Logger;
}

export interface RunningDashboard {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  app: FastifyInstance;
  /** Stops listening, waits for the actions being recorded, then closes the dashboard's queue (not the Redis connection, nor the database). */
  close(): Promise<void>;
}

export function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

export async function startDashboard(options: DashboardOptions): Promise<RunningDashboard> {
  const { redis, keys, db, logger } = options;
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
  // Before the credentials: a request under a name this page is not served at is answered nothing else.
  app.addHook('onRequest', refuseForeignHost({ loopbackOnly: options.credentials === undefined, publicOrigin: options.publicOrigin }));
  if (options.credentials)
    app.addHook('onRequest', basicAuth(options.credentials, createLoginThrottle({ ...options.loginThrottle, logger })));
  app.addHook('onRequest', refuseForeignOrigin({ publicOrigin: options.publicOrigin }));
  app.addHook('onRequest', refuseUnsafeActions(BOARD_PATH, queue));
  // Behind the credentials, the only user who can have come through is theirs.
  const recording = new Set<Promise<void>>();
  app.addHook('onSend', recordActions(db, options.credentials?.user ?? ANONYMOUS, recording, logger));
  // fastify's own 404 repeats the method and the path it was given; this says one fixed sentence.
  app.setNotFoundHandler(async (_request, reply) =>
    reply.code(404).type('text/plain; charset=utf-8').send('There is no such page on the realty-batch dashboard.\n'),
  );

  await app.register(bullBoardPlugin({ queue, basePath: BOARD_PATH, readOnly: options.readOnly ?? false, batchesPath: BATCHES_PATH }), {
    prefix: BOARD_PATH,
  });
  await app.register(
    batchesRoutes({ redis, keys, db, boardPath: BOARD_PATH, ...(options.lang && { lang: options.lang }), ...(logger && { logger }) }),
  );
  const nav = { boardPath: BOARD_PATH, batchesPath: BATCHES_PATH, ...(logger && { logger }) };
  await app.register(dealsRoutes({ db, ...nav }));
  await app.register(auditRoutes({ db, ...nav }));

  const metrics = createDashboardMetrics(redis, keys, db, queue);
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
      await Promise.allSettled([...recording]);
      await queue.close();
    },
  };
}
