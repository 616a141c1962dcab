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
import { createRequestLimiter } from './rate-limit.js';
import { createMetricsRecorder } from '../metrics/recorder.js';

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
  /** Gateway requests per second across every worker (`--rate`); none when undefined. */
  rate?: number;
  /**
   * How long a job stays locked to a worker that stopped answering (`--lock-ms`):
   * after that another worker takes it over. Locks are renewed at half of it.
   */
  lockMs?: number;
  logger: Logger;
}

/** How long a stopping worker waits for its active jobs: a gateway call's timeout and some. */
export const DEFAULT_GRACE_MS = 45_000;

export interface DealWorker {
  worker: Worker<DealJobData, OutcomeRecord>;
  queue: Queue<DealJobData, OutcomeRecord>;
  /**
   * Stops taking jobs and lets active ones finish, for at most `graceMs`; jobs
   * still active then are left to BullMQ's stalled-job recovery (another worker
   * takes them over, with the same requestId). Closes the client; the caller
   * closes Redis. True when every active job finished in time.
   */
  close(graceMs?: number): Promise<boolean>;
}

export function createDealWorker(options: DealWorkerOptions): DealWorker {
  const { connection, keys, logger } = options;
  const queue = new Queue<DealJobData, OutcomeRecord>(keys.queueName, { connection, prefix: keys.bullPrefix });
  queue.on('error', (err) => logger.error({ err: { message: err.message } }, 'queue error'));
  const metrics = createMetricsRecorder(connection, keys.metrics);
  const client = createRealtyClient({
    baseUrl: options.apiUrl,
    sessionId: options.sessionId,
    timeoutMs: options.timeoutMs,
    connections: Math.max(8, options.concurrency),
    onCall: (endpoint, status, ms) => metrics.call(endpoint, status, ms),
  });
  const outcomes = createOutcomeStore(connection, keys);
  let sessionReported = false;
  const limiter = options.rate ? createRequestLimiter(connection, keys.rate, options.rate) : undefined;

  const processor = createDealProcessor({
    client,
    outcomes,
    batches: createBatchStore(connection, keys),
    apiUrl: options.apiUrl,
    attempts: options.attempts,
    logger,
    onOutcome: (record) => metrics.outcome(record.outcome),
    async pauseForSession() {
      await connection.set(keys.pauseReason, 'session');
      await queue.pause();
      if (!sessionReported) {
        sessionReported = true;
        logger.error('the gateway refused the session (401): the queue is paused on every host; set a valid REALTY_SESSION_ID and start a worker again');
      }
    },
    ...(limiter && {
      async throttle() {
        const { waitMs } = await limiter.take();
        if (waitMs > 0) {
          await worker.rateLimit(waitMs);
          throw Worker.RateLimitError();
        }
      },
    }),
  });

  const worker = new Worker<DealJobData, OutcomeRecord>(keys.queueName, processor, {
    connection,
    prefix: keys.bullPrefix,
    concurrency: options.concurrency,
    ...(options.lockMs ? { lockDuration: options.lockMs, stalledInterval: options.lockMs } : {}),
    // BullMQ honours worker.rateLimit() only on a worker with a limiter; the per-request
    // budget above is the real bound (a job makes one or two requests).
    ...(options.rate ? { limiter: { max: options.rate, duration: 1000 } } : {}),
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) =>
        retryDelay(attemptsMade, options.backoffMs, (err as { cause?: unknown } | undefined)?.cause ?? err),
    },
  });
  worker.on('error', (err) => logger.error({ err: { message: err.message } }, 'worker error'));
  // The net under the processor: a job BullMQ failed by itself (stalled too often) still gets its one outcome.
  worker.on('failed', (job, err) => {
    // Jobs of a batch whose load failed are not rows of it: no outcome.
    if (!job?.finishedOn || err.name === 'BatchAbandonedError') return;
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
    async close(graceMs = DEFAULT_GRACE_MS) {
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([
        worker.close().then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), graceMs);
        }),
      ]);
      clearTimeout(timer);
      if (!inTime) {
        logger.warn({ graceMs }, 'active jobs did not finish within the grace period; closing anyway, another worker takes them over');
        await worker.close(true);
      }
      await queue.close();
      await client.close();
      await metrics.close().catch(() => undefined);
      return inTime;
    },
  };
}
