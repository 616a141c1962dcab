/** The processor of `tick` jobs: one tick of a nightly schedule (src/schedule/run-tick.ts). */
import type { Job, Processor } from 'bullmq';
import { runTick, type TickResult } from '../src/schedule/run-tick.js';
import type { TickData } from '../src/schedule/scheduler.js';
import type { TickProcessorContext } from '../src/schedule/tick-worker.js';

export function createTickProcessor(ctx: TickProcessorContext): Processor<TickData, TickResult> {
  return async (job: Job<TickData, TickResult>) => runTick(job.data, ctx);
}
