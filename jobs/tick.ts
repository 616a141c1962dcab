/** The processor of `tick` jobs: one tick of a nightly schedule (src/schedule/run-tick.ts). */
import type { Job, Processor } from 'bullmq';
import type { RedisClient as Redis } from '../src/queue/connection.js';
import type { Logger } from '../src/logger.js';
import type { Keys } from '../src/queue/keys.js';
import { runTick, type TickResult } from '../src/schedule/run-tick.js';
import type { TickData } from '../src/schedule/scheduler.js';

export interface TickProcessorContext {
  redis: Redis;
  keys: Keys;
  logger: Logger;
  signal?: AbortSignal;
  pollMs?: number;
}

export function createTickProcessor(ctx: TickProcessorContext): Processor<TickData, TickResult> {
  return async (job: Job<TickData, TickResult>) => runTick(job.data, ctx);
}
