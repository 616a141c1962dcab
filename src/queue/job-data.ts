import type { Deal } from '../domain/deal.js';
import type { DocflowType } from '../domain/gateway.js';
import { packDealCompact, unpackDealCompact, type PackedDeal } from './deal-pack.js';

/** The one job kind: submit one deal of one batch. */
export const DEAL_JOB = 'deal';

export interface DealJobData {
  /** In the job's id (`dealJobId`); in its hash only in finished jobs (see StoredJobData). */
  batch: string;
  /** The record's 1-based position in the input. */
  row: number;
  /** In the job's id, as `batch`. */
  dealId: string;
  /** The deal, in memory only: a job is written with `c` instead (`storedJobData`). */
  deal?: Deal;
  /**
   * The deal as a job keeps it in Redis: positional, without key names, its Cyrillic texts one
   * byte a letter (src/queue/deal-pack.ts). Removed once the row has its outcome (it holds
   * personal data).
   */
  c?: PackedDeal;
  /** The docflow type of the batch's rows (src/docflows/); absent: a registration. */
  type?: DocflowType;
  /** The deal's key in the ledger when it is not its dealId (an extract's: src/docflows/extract/). */
  key?: string;
  /** Send even when the ledger says the deal was submitted before (`--resubmit`). */
  resubmit?: boolean;
  /** Times the job waited for an open circuit breaker without spending a try. */
  holds?: number;
  /** Times the job waited for another row holding its deal (another batch, another host). */
  waits?: number;
  /**
   * No tries left, but the last may have made a docflow (no answer came): the row ends with
   * this once the news feed has shown that it made none, or with its docflow if it did.
   */
  exhausted?: { outcome: 'failed' | 'unavailable'; errorCode?: string; errorMessage: string; httpStatus?: number };
}

/**
 * A job's data as its hash holds it. A waiting job is written without its batch and dealId:
 * its id (`dealJobId`) has both, and the hash kept them again: 41 bytes of data a row in the
 * bench (batch `bench`), about 30 of Redis memory once jemalloc's size classes round them
 * (50 on the suggest rows); more for a longer batch id. Finished jobs have them (the worker
 * writes back what it read, without the deal). `jobDataOf` reads either.
 */
export type StoredJobData = Omit<DealJobData, 'batch' | 'dealId'> & Partial<Pick<DealJobData, 'batch' | 'dealId'>>;

/** The data as a job is written to Redis: its deal packed (`c`), without its batch and dealId (its id has them). */
export function storedJobData(data: DealJobData): StoredJobData {
  const { batch: _batch, dealId: _dealId, deal, ...rest } = data;
  return deal ? { ...rest, c: packDealCompact(deal) } : rest;
}

/** The batch and dealId a deal job's id names (`dealJobId`); undefined when it is not such an id. */
export function jobIdParts(id: string): { batch: string; dealId: string } | undefined {
  // base64url has no '.': the last one ends the batch id (which may hold some).
  const dot = id.lastIndexOf('.');
  if (dot <= 0) return undefined;
  return { batch: id.slice(0, dot), dealId: Buffer.from(id.slice(dot + 1), 'base64url').toString('utf8') };
}

/** A deal job's data as the worker and the tools read it: its batch and dealId from its id when its hash has none. */
export function jobDataOf(id: string | undefined, data: StoredJobData): DealJobData {
  if (typeof data.batch === 'string' && typeof data.dealId === 'string') return data as DealJobData;
  const parts = id === undefined ? undefined : jobIdParts(id);
  if (!parts) throw new Error(`job ${id ?? '(without an id)'} names no batch and dealId, in its data or in its id`);
  return { batch: parts.batch, dealId: parts.dealId, ...data };
}

/** The job's deal, packed or not; undefined once its row has its outcome. */
export function dealOf(data: DealJobData): Deal | undefined {
  if (data.deal) return data.deal;
  return data.c ? unpackDealCompact(data.c, data.dealId) : undefined;
}

/** The job's data without its deal, packed or not: what a finished job keeps. */
export function withoutDeal(data: DealJobData): DealJobData {
  const { deal: _deal, c: _c, ...rest } = data;
  return rest;
}

/** Stable per (batch, deal): the same file loaded twice into one batch adds no second job. */
export function dealJobId(batch: string, dealId: string): string {
  // BullMQ refuses ':' and integer-looking ids; dealIds are the bank's own strings.
  return `${batch}.${Buffer.from(dealId, 'utf8').toString('base64url')}`;
}

/** A safety net far above the worker's own retry budget (`--attempts`), which decides. */
export const JOB_ATTEMPTS_CEILING = 1000;

/**
 * The options of every deal job, stored with each job (as JSON in its hash: kept short,
 * it is paid per waiting row). The worker's `--attempts` decides retries; BullMQ's
 * attempts are only a ceiling. How long finished jobs stay is the worker's to say
 * (`DEAL_JOBS_KEPT`), not the job's.
 */
export function dealJobOptions() {
  return {
    attempts: JOB_ATTEMPTS_CEILING,
    // Any type BullMQ does not know goes to the worker's backoffStrategy, which reads none: one
    // letter, as the options are stored with every waiting job.
    backoff: { type: 'r' },
  };
}
