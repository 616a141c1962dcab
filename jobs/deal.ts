/**
 * The processor of `deal` jobs: resolve the cadastral number, claim the deal in the
 * ledger, create the docflow, record exactly one outcome. The steps (src/worker/deal/steps.ts)
 * decide; this file turns their Decision into what BullMQ understands.
 */
import { DelayedError, UnrecoverableError, WaitingError, type Processor } from 'bullmq';
import { BatchAbandonedError } from '../src/queue/batch-abandoned.js';
import { failsJob } from '../src/outcomes/error-codes.js';
import type { OutcomeRecord } from '../src/domain/outcome.js';
import type { DealJobData } from '../src/queue/job-data.js';
import { createBatchCache } from '../src/worker/batch-cache.js';
import { DealRun, type DealJob } from '../src/worker/deal/run.js';
import { decideDeal, type Decision } from '../src/worker/deal/steps.js';
import { maskThrown } from '../src/worker/deal/job-boundary.js';
import type { DealProcessorContext } from '../src/worker/deal/context.js';

export type { DealProcessorContext };

/** A decision at the BullMQ boundary: a job's result, or what its run throws. */
async function apply(run: DealRun, decision: Decision): Promise<OutcomeRecord> {
  const { job, token, ctx } = run;
  switch (decision.kind) {
    case 'outcome':
      return ended(await run.finish(decision.fields, decision.ledger));
    case 'done':
      await run.forget();
      return ended(decision.record);
    case 'delay':
      if (decision.patch) await run.patch(decision.patch);
      await job.moveToDelayed(Date.now() + Math.max(0, Math.round(decision.ms)), token);
      throw new DelayedError();
    case 'wait':
      await ctx.pauseForSession();
      // Back to waiting without spending an attempt: the row is not finished.
      await job.moveToWait(token);
      throw new WaitingError();
    case 'drop':
      await run.forget();
      throw new BatchAbandonedError(run.batch);
    case 'stop':
      throw new UnrecoverableError(decision.message);
    case 'fail':
      throw decision.error;
  }
}

/**
 * A row's outcome at the boundary: its job completes with the record as its return value,
 * whatever the outcome, unless the machinery failed (failsJob): then the job fails with no try
 * left, the record's message (masked by finish) its failedReason, stacktrace and failed event.
 */
function ended(record: OutcomeRecord): OutcomeRecord {
  if (failsJob(record)) throw new UnrecoverableError(record.errorMessage ?? record.outcome);
  return record;
}

export function createDealProcessor(ctx: DealProcessorContext): Processor<DealJobData, OutcomeRecord> {
  const batches = createBatchCache(ctx.batches, { databaseId: ctx.databaseId });
  // The boundary with BullMQ: what a run throws becomes the job's failedReason, its stacktrace
  // and the queue's failed event. The steps mask the gateway's text themselves; this masks
  // anything else (a defect's message, a library's) before BullMQ stores it.
  return async (job: DealJob, token?: string) => {
    const run = new DealRun(ctx, job, token);
    try {
      return await apply(run, await decideDeal(run, batches));
    } catch (err) {
      throw maskThrown(err, run.deal, batches.knownProfile(run.batch));
    }
  };
}
