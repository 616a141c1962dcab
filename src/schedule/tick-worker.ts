/** The worker of the `schedule` queue, which every `realty-batch work` runs beside its deal worker. */
import { Worker, type Processor } from 'bullmq';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Logger } from '../logger.js';
import type { Keys } from '../redis/keys.js';
import type { TickResult } from './run-tick.js';
import { SCHEDULE_QUEUE, type TickData } from './scheduler.js';

/** What a job of the schedule queue ends with: a tick's files, or the morning report's path. */
export type ScheduleJobResult = TickResult | { report: string };

/** What a tick's processor gets (jobs/tick.ts). */
export interface TickProcessorContext {
  redis: Redis;
  keys: Keys;
  /** The system of record, opened by the process (`work`), which closes it. */
  db: Database;
  logger: Logger;
  signal?: AbortSignal;
  pollMs?: number;
  /** The worker's `--feed-lag-ms`: a tick's batch waits for the feed with it, as `run` does. */
  feedLagMs?: number;
}

export interface TickWorkerOptions {
  connection: Redis;
  keys: Keys;
  db: Database;
  logger: Logger;
  /** Makes the processor of `tick` jobs from its context (jobs/tick.ts: createTickProcessor). */
  processor: (ctx: TickProcessorContext) => Processor<TickData, ScheduleJobResult>;
  signal?: AbortSignal;
  pollMs?: number;
  feedLagMs?: number;
}

export function createTickWorker(options: TickWorkerOptions): Worker<TickData, ScheduleJobResult> {
  const { connection, keys, logger } = options;
  const worker = new Worker<TickData, ScheduleJobResult>(
    SCHEDULE_QUEUE,
    options.processor({
      redis: connection,
      keys,
      db: options.db,
      logger,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.pollMs ? { pollMs: options.pollMs } : {}),
      ...(options.feedLagMs !== undefined && { feedLagMs: options.feedLagMs }),
    }),
    // Ticks of different schedules run side by side; one schedule's ticks never overlap (its lock).
    { connection, prefix: keys.bullPrefix, concurrency: 4 },
  );
  worker.on('error', (err) => logger.error({ err: { message: err.message } }, 'schedule worker error'));
  worker.on('failed', (job, err) => logger.error({ schedule: job?.data.name, err: { message: err.message } }, 'a schedule tick failed'));
  return worker;
}
