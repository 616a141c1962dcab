/**
 * The processor of the `schedule` queue: a `tick` job is one tick of a nightly schedule
 * (src/schedule/run-tick.ts), a `report` job its morning report (src/schedule/morning-report.ts).
 */
import type { Job, Processor } from 'bullmq';
import { writeMorningReport } from '../src/schedule/morning-report.js';
import { runTick } from '../src/schedule/run-tick.js';
import { REPORT_JOB, type TickData } from '../src/schedule/scheduler.js';
import type { ScheduleJobResult, TickProcessorContext } from '../src/schedule/tick-worker.js';

export function createTickProcessor(ctx: TickProcessorContext): Processor<TickData, ScheduleJobResult> {
  return async (job: Job<TickData, ScheduleJobResult>) => {
    if (job.name === REPORT_JOB) return { report: (await writeMorningReport(job.data, ctx)).json };
    return runTick(job.data, ctx);
  };
}
