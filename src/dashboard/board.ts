/**
 * Bull Board for the `deals` queue: jobs by state, a job's (masked) data, its
 * log and error; retry, and clean of finished jobs, unless read-only.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { textOf } from './batches-page.js';
import { maskJobData, maskReturnValue } from './mask.js';
import { jobIdParts } from '../queue/job-data.js';

export interface BoardOptions {
  queue: Queue;
  /** Where the board is mounted, e.g. `/queues`. */
  basePath: string;
  /** No retry, clean, pause or any other action. */
  readOnly: boolean;
  /** The batches page, linked from the board's menu. */
  batchesPath: string;
}

/**
 * What a job's data and id say of its row: a waiting job's hash has no batch and dealId, its id
 * (`dealJobId`) has them.
 */
function rowOf(id: unknown, data: unknown): { batch?: unknown; row?: unknown; dealId?: unknown } {
  const own = (data ?? {}) as { batch?: unknown; row?: unknown; dealId?: unknown };
  const parts = typeof id === 'string' && own.batch === undefined ? jobIdParts(id) : undefined;
  return parts ? { ...own, ...parts } : own;
}

/** A job's title in the lists: the row it is, never a person. */
function jobName(job: { id?: unknown; name?: string; data?: unknown }): string {
  const { batch, row, dealId } = rowOf(job.id, job.data);
  return typeof batch === 'string' && typeof row === 'number'
    ? `${job.name ?? 'deal'} ${textOf(dealId)} (batch ${batch}, row ${row})`
    : (job.name ?? '');
}

/**
 * Times as the rest of the tool writes them (ISO 8601, UTC): `2026-11-24, 19:43:10 UTC`,
 * with the date even for today's jobs. Bull Board formats with Intl.DateTimeFormat in the
 * page's language, whose order of day and month the ISO calendar overrides.
 */
export const ISO_TIME: Intl.DateTimeFormatOptions = {
  calendar: 'iso8601',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
  timeZone: 'UTC',
  timeZoneName: 'short',
};

/** The fastify plugin serving the board; register it with `{ prefix: basePath }`. */
export function bullBoardPlugin(options: BoardOptions) {
  // Bull Board 9.10 has no option hiding one action: short of readOnlyMode (which hides
  // retry and pause too) it still offers Clean on a waiting or delayed job, Clean all
  // of delayed jobs, Set concurrency and Set rate limit; `refuseUnsafeActions` answers
  // them with a sentence the page shows.
  const adapter = new BullMQAdapter(options.queue, {
    readOnlyMode: options.readOnly,
    allowRetries: !options.readOnly,
    description: 'one job per deal of every batch',
  });
  adapter.setFormatter('data', maskJobData);
  adapter.setFormatter('returnValue', maskReturnValue);
  adapter.setFormatter('name', jobName);

  const server = new FastifyAdapter();
  server.setBasePath(options.basePath);
  createBullBoard({
    queues: [adapter],
    serverAdapter: server,
    options: {
      uiConfig: {
        boardTitle: 'realty-batch',
        miscLinks: [{ text: 'Batches and results files', url: options.batchesPath }],
        hideDocsLink: true,
        dateFormats: { short: ISO_TIME, common: ISO_TIME, full: ISO_TIME },
      },
    },
  });
  const board = server.registerPlugin();
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('onSend', dropThirdPartyFonts);
    await app.register(board);
  };
}

/** Bull Board's page links its web fonts at Google; `<link ...fonts.googleapis.com...>` tags. */
const THIRD_PARTY_FONTS = /<link\b[^>]*\bhref="https:\/\/fonts\.googleapis\.com\/[^"]*"[^>]*>\s*/g;

/**
 * Nothing of the page is fetched from elsewhere: its Google Fonts link is taken
 * out (the system's fonts stand in), so an operator's browser tells no one
 * when the page is opened, and the policy (security.ts) has nothing to refuse.
 */
function dropThirdPartyFonts(_request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (typeof payload !== 'string' || !/^text\/html/.test(textOf(reply.getHeader('content-type')))) return Promise.resolve(payload);
  return Promise.resolve(payload.replace(THIRD_PARTY_FONTS, ''));
}

/** The states a deal job reaches only after the worker stored its row's outcome. */
const FINISHED: ReadonlySet<string> = new Set(['completed', 'failed']);

const NOT_OFFERED = 'This action is not offered for deal jobs: load the file again or use realty-batch retry.';

/**
 * Board actions refused even when the board is not read-only: editing a job's
 * data would write the masked deal over the real one, jobs enter the queue only
 * through `load` (so every row gets its outcome), and emptying or obliterating
 * the queue would leave rows without one. A global concurrency or rate limit is
 * stored in the queue's meta key and every worker of the fleet obeys it, so one
 * typed here could starve the fleet and leave rows without progress: those are
 * the workers' own options. `PUT .../rate-limit/release` stays: it sets
 * nothing, it only ends the limiter's current window (under a second with
 * `--rate`, which the worker opens again on its next request over the budget),
 * so it can neither starve the fleet nor lose a row. Patterns are Bull Board's
 * routes under the mount point.
 */
const REFUSED_ACTIONS: ReadonlyArray<{ method: string; route: string; error: string }> = [
  { method: 'PATCH', route: '/api/queues/:queueName/:jobId/update-data', error: NOT_OFFERED },
  { method: 'POST', route: '/api/queues/:queueName/add', error: NOT_OFFERED },
  { method: 'PUT', route: '/api/queues/:queueName/empty', error: NOT_OFFERED },
  { method: 'PUT', route: '/api/queues/:queueName/obliterate', error: NOT_OFFERED },
  {
    method: 'PUT',
    route: '/api/queues/:queueName/concurrency',
    error:
      'A queue-wide concurrency is not set from this page, since every worker of the fleet would obey it: start the workers with realty-batch work --concurrency N instead.',
  },
  {
    method: 'PUT',
    route: '/api/queues/:queueName/rate-limit',
    error:
      'A queue-wide rate limit is not set from this page, since every worker of the fleet would obey it: start the workers with realty-batch work --rate N instead.',
  },
];

/** Cleaning by state: only finished jobs, whose rows have their outcomes, may go. */
const CLEAN_ALL = { method: 'PUT', route: '/api/queues/:queueName/clean/:queueStatus' };
const CLEAN_UNFINISHED =
  'Only completed and failed jobs can be cleaned: the others are rows without an outcome yet, and cleaning them would lose the rows.';

/** Removing one job: only a finished one, which is looked up in Redis first. */
const CLEAN_JOB = { method: 'PUT', route: '/api/queues/:queueName/:jobId/clean' };

/** Why job `jobId` may not be removed, naming its batch and row (never a person). */
async function unfinishedJobError(queue: Queue, jobId: string, state: string): Promise<string> {
  const job = await queue.getJob(jobId).catch(() => undefined);
  const { batch, row } = rowOf(jobId, job?.data);
  const where = typeof batch === 'string' && typeof row === 'number' ? ` (batch ${batch}, row ${row})` : '';
  return `Job ${jobId}${where} has no outcome yet (${state}), so removing it would lose the row: let it finish, or pause the queue.`;
}

/**
 * An `onRequest` hook refusing the actions that could lose a row: 405 for the
 * ones never offered (see above, and cleaning unfinished states), 409 for
 * removing a job that is not finished. The job's state is read from `queue`
 * just before Bull Board removes it, not atomically with the removal: a
 * `realty-batch retry` replacing that very job within those milliseconds would
 * lose its row, which `realty-batch retry --missing` then finds.
 */
export function refuseUnsafeActions(basePath: string, queue: Queue) {
  const refused = new Map(REFUSED_ACTIONS.map((a) => [`${a.method} ${basePath}${a.route}`, a.error]));
  const cleanAll = `${CLEAN_ALL.method} ${basePath}${CLEAN_ALL.route}`;
  const cleanJob = `${CLEAN_JOB.method} ${basePath}${CLEAN_JOB.route}`;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const action = `${request.method} ${request.routeOptions.url ?? ''}`;
    const error = refused.get(action);
    if (error) return reply.code(405).send({ error });
    const params = request.params as Record<string, string | undefined>;
    if (action === cleanAll && !FINISHED.has(params.queueStatus ?? '')) return reply.code(405).send({ error: CLEAN_UNFINISHED });
    if (action !== cleanJob) return undefined;

    const jobId = params.jobId ?? '';
    let state: string;
    try {
      state = await queue.getJobState(jobId);
    } catch {
      return reply.code(503).send({ error: "The job's state could not be read from Redis, so nothing was removed: try again." });
    }
    // `unknown`: no such job; Bull Board answers 404 itself.
    if (FINISHED.has(state) || state === 'unknown') return undefined;
    return reply.code(409).send({ error: await unfinishedJobError(queue, jobId, state) });
  };
}
