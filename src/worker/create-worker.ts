/**
 * A BullMQ worker of `deal` jobs with its gateway client and stores: what `run`
 * starts in-process and `work` starts alone.
 */
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createDealProcessor } from '../../jobs/deal.js';
import type { Logger } from '../logger.js';
import { createBatchStore } from '../outcomes/batches.js';
import { createOutcomeStore } from '../outcomes/store.js';
import type { OutcomeRecord } from '../outcomes/types.js';
import type { DealJobData } from '../queue/job-data.js';
import type { Keys } from '../queue/keys.js';
import { createRealtyClient } from '../realty/client.js';
import { retryDelay } from './decide.js';

export interface DealWorkerOptions {
  /** A connection with `maxRetriesPerRequest: null`; the worker duplicates it for blocking calls. */
  connection: Redis;
  keys: Keys;
  apiUrl: string;
  sessionId: string;
  concurrency: number;
  attempts: number;
  backoffMs: number;
  timeoutMs: number;
  logger: Logger;
}

export interface DealWorker {
  worker: Worker<DealJobData, OutcomeRecord>;
  queue: Queue<DealJobData, OutcomeRecord>;
  /** Stops taking jobs, lets active ones finish, closes the client; the caller closes Redis. */
  close(): Promise<void>;
}

export function createDealWorker(options: DealWorkerOptions): DealWorker {
  const { connection, keys, logger } = options;
  const queue = new Queue<DealJobData, OutcomeRecord>(keys.queueName, { connection, prefix: keys.bullPrefix });
  queue.on('error', (err) => logger.error({ err: { message: err.message } }, 'queue error'));
  const client = createRealtyClient({
    baseUrl: options.apiUrl,
    sessionId: options.sessionId,
    timeoutMs: options.timeoutMs,
    connections: Math.max(8, options.concurrency),
  });
  const outcomes = createOutcomeStore(connection, keys);
  let sessionReported = false;

  const processor = createDealProcessor({
    client,
    outcomes,
    batches: createBatchStore(connection, keys),
    apiUrl: options.apiUrl,
    attempts: options.attempts,
    logger,
    async pauseForSession() {
      await connection.set(keys.pauseReason, 'session');
      await queue.pause();
      if (!sessionReported) {
        sessionReported = true;
        logger.error('the gateway refused the session (401): the queue is paused on every host; set a valid REALTY_SESSION_ID and start a worker again');
      }
    },
  });

  const worker = new Worker<DealJobData, OutcomeRecord>(keys.queueName, processor, {
    connection,
    prefix: keys.bullPrefix,
    concurrency: options.concurrency,
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) =>
        retryDelay(attemptsMade, options.backoffMs, (err as { cause?: unknown } | undefined)?.cause ?? err),
    },
  });
  worker.on('error', (err) => logger.error({ err: { message: err.message } }, 'worker error'));
  // The net under the processor: a job BullMQ failed by itself (stalled too often) still gets its one outcome.
  worker.on('failed', (job, err) => {
    if (!job?.finishedOn) return;
    const record: OutcomeRecord = {
      row: job.data.row,
      dealId: job.data.dealId,
      outcome: 'failed',
      attempts: job.attemptsMade,
      errorCode: 'ERR_JOB_FAILED',
      errorMessage: err.message,
      finishedAt: new Date().toISOString(),
    };
    outcomes.recordIfAbsent(job.data.batch, record).catch((e: unknown) => logger.error({ err: { message: String(e) } }, 'could not record a failed job'));
  });

  return {
    worker,
    queue,
    async close() {
      await worker.close();
      await queue.close();
      await client.close();
    },
  };
}
