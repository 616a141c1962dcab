/** The worker of the `schedule` queue, which every `realty-batch work` runs beside its deal worker. */
import { Worker } from 'bullmq';
import type { RedisClient as Redis } from '../queue/connection.js';
import { createTickProcessor } from '../../jobs/tick.js';
import type { Logger } from '../logger.js';
import type { Keys } from '../queue/keys.js';
import type { TickResult } from './run-tick.js';
import { SCHEDULE_QUEUE, type TickData } from './scheduler.js';

export function createTickWorker(options: { connection: Redis; keys: Keys; logger: Logger; signal?: AbortSignal; pollMs?: number }): Worker<TickData, TickResult> {
  const { connection, keys, logger } = options;
  const worker = new Worker<TickData, TickResult>(
    SCHEDULE_QUEUE,
    createTickProcessor({ redis: connection, keys, logger, ...(options.signal ? { signal: options.signal } : {}), ...(options.pollMs ? { pollMs: options.pollMs } : {}) }),
    // Ticks of different schedules run side by side; one schedule's ticks never overlap (its lock).
    { connection, prefix: keys.bullPrefix, concurrency: 4 },
  );
  worker.on('error', (err) => logger.error({ err: { message: err.message } }, 'schedule worker error'));
  worker.on('failed', (job, err) => logger.error({ schedule: job?.data.name, err: { message: err.message } }, 'a schedule tick failed'));
  return worker;
}
