/**
 * Bull Board for the `deals` queue: jobs by state, a job's (masked) data, its
 * log and error; retry and clean, unless read-only.
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { maskJobData, maskReturnValue } from './mask.js';

export interface BoardOptions {
  queue: Queue;
  /** Where the board is mounted, e.g. `/queues`. */
  basePath: string;
  /** No retry, clean, pause or any other action. */
  readOnly: boolean;
  /** The batches page, linked from the board's menu. */
  batchesPath: string;
}

/** A job's title in the lists: the row it is, never a person. */
function jobName(job: { name?: string; data?: { batch?: unknown; row?: unknown; dealId?: unknown } }): string {
  const { batch, row, dealId } = job.data ?? {};
  return typeof batch === 'string' && typeof row === 'number' ? `${job.name ?? 'deal'} ${String(dealId ?? '')} (batch ${batch}, row ${row})` : (job.name ?? '');
}

/** The fastify plugin serving the board; register it with `{ prefix: basePath }`. */
export function bullBoardPlugin(options: BoardOptions) {
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
      },
    },
  });
  return server.registerPlugin();
}

/**
 * Board actions refused even when the board is not read-only: editing a job's
 * data would write the masked deal over the real one, jobs enter the queue only
 * through `load` (so every row gets its outcome), and emptying or obliterating
 * the queue would leave rows without one. Patterns are Bull Board's routes
 * under the mount point.
 */
const REFUSED_ACTIONS: ReadonlyArray<{ method: string; route: string }> = [
  { method: 'PATCH', route: '/api/queues/:queueName/:jobId/update-data' },
  { method: 'POST', route: '/api/queues/:queueName/add' },
  { method: 'PUT', route: '/api/queues/:queueName/empty' },
  { method: 'PUT', route: '/api/queues/:queueName/obliterate' },
];

/** An `onRequest` hook answering 405 to the actions above. */
export function refuseUnsafeActions(basePath: string) {
  const refused = new Set(REFUSED_ACTIONS.map((a) => `${a.method} ${basePath}${a.route}`));
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (!refused.has(`${request.method} ${request.routeOptions.url ?? ''}`)) return undefined;
    return reply.code(405).send({ error: 'This action is not offered for deal jobs: load the file again or use realty-batch retry.' });
  };
}
