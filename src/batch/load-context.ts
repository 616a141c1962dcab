/**
 * What a load needs of Redis, as one object: the batch's metadata and state (the
 * batch store), its jobs and row index, its rows' outcomes, and the ledger's
 * answers. `loadBatch` runs over it; redis-load-context.ts is the real one, and
 * test/unit/load-batch.test.ts gives a fake one to try each path of a load without Redis.
 *
 * The context does what it is told and decides nothing: which rows become jobs or
 * outcomes, what a job found in Redis means, when a batch is failed or its jobs are
 * taken back, is decided in load-batch.ts, enqueue.ts and below.
 */
import { LOADER } from '../config.js';
import { BatchJobsHeldError } from '../errors.js';
import type { RegisteredDeal } from '../ledger/entry.js';
import type { DocflowType } from '../domain/gateway.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import type { DealJobData } from '../queue/job-data.js';
import type { BatchStore } from './batch-store.js';

/** A deal's docflow as the ledger keeps it: which row made it, how it became known, for which property. */
export type LedgerDeal = RegisteredDeal;

/** A batch's jobs, its row index and its outcomes, and the ledger, as a load uses them. */
export interface JobStore {
  /** The ledger's docflow for each of the bank's deals (undefined: none), in their order; one read. */
  submittedDeals(bank: string, dealIds: readonly string[], type?: DocflowType): Promise<Array<LedgerDeal | undefined>>;
  /**
   * One chunk, in one round trip: the jobs' rows into the batch's row index (before the
   * jobs: no job exists that the index does not name), the outcomes and their counts
   * in the metrics, then the jobs themselves; a job that exists already stays as it is.
   * Resolves, for each job, whether it existed before this write. `skipFinished` (a batch
   * loaded again): a row that has its outcome already gets no job and no index entry (its
   * finished job is gone: BullMQ keeps only the last few), and counts as existing; it
   * costs one more round trip, so a fresh batch (no outcomes yet) does without. `type`: the
   * rows' docflow type, the outcome counters' label (a registration's when absent).
   */
  write(
    batch: string,
    jobs: readonly DealJobData[],
    outcomes: readonly OutcomeRecord[],
    options?: { skipFinished?: boolean; type?: DocflowType },
  ): Promise<boolean[]>;
  /** Adds these jobs (a job that exists already stays as it is). */
  add(batch: string, jobs: readonly DealJobData[]): Promise<void>;
  /** Removes these deals' jobs: how many went, and how many are still there (a worker holds them). */
  remove(batch: string, dealIds: readonly string[]): Promise<{ removed: number; held: number }>;
  /** The deal ids of the batch's row index (every job it enqueued), a page at a time. */
  rowPages(batch: string): AsyncIterable<string[]>;
  /** Deletes the batch's outcomes, row index and checkpoints. */
  clear(batch: string): Promise<void>;
  /** Moves the batch's jobs that workers held back while it loaded (delayed) to waiting. */
  release(batch: string): Promise<void>;
}

export interface LoadContext {
  readonly batches: Pick<BatchStore, 'open' | 'heartbeat' | 'state' | 'setTotal' | 'fail'> & Partial<Pick<BatchStore, 'get'>>;
  readonly jobs: JobStore;
  /** Lets go of what the context opened (the queue); the connection stays its owner's. */
  close(): Promise<void>;
}

/**
 * Removes every job of a batch. A job a worker holds at that moment cannot be
 * removed: workers only hold a loading batch's jobs for an instant (to delay
 * them), so the pass is repeated until none is left, for a few seconds at most.
 */
export async function takeBackJobs(jobs: JobStore, batch: string): Promise<number> {
  let removed = 0;
  for (let pass = 0; pass < LOADER.takeBackPasses; pass++) {
    let held = 0;
    // The batch's row index names every job it enqueued: one key, so this works on a cluster too.
    for await (const dealIds of jobs.rowPages(batch)) {
      const result = await jobs.remove(batch, dealIds);
      removed += result.removed;
      held += result.held;
    }
    if (held === 0) return removed;
    await new Promise((resolve) => setTimeout(resolve, LOADER.takeBackPauseMs));
  }
  throw new BatchJobsHeldError(batch);
}

/** A load that failed: the batch says why, and the jobs it added go (workers held them: none was sent). */
export async function abandonLoad(context: LoadContext, batch: string, err: unknown): Promise<void> {
  await context.batches.fail(batch, err instanceof Error ? err.message : String(err));
  await takeBackJobs(context.jobs, batch);
}
