import type { Deal } from '../input/deal.js';
import { packDeal, unpackDeal, type PackedDeal } from './deal-pack.js';

/** The one job kind: submit one deal of one batch. */
export const DEAL_JOB = 'deal';

export interface DealJobData {
  batch: string;
  /** The record's 1-based position in the input. */
  row: number;
  dealId: string;
  /**
   * The deal, in memory and in jobs enqueued by earlier versions; removed from Redis once the
   * row has its outcome (it holds personal data). Jobs are written with `d` instead (`storedJobData`).
   */
  deal?: Deal;
  /** The deal as a job keeps it in Redis: positional, without key names (src/queue/deal-pack.ts). Removed with the outcome, as `deal`. */
  d?: PackedDeal;
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

/** The data as a job is written to Redis: its deal packed (positional, no key names), everything else as it is. */
export function storedJobData(data: DealJobData): DealJobData {
  if (!data.deal) return data;
  const { deal, ...rest } = data;
  return { ...rest, d: packDeal(deal) };
}

/** The job's deal, packed or not; undefined once its row has its outcome. */
export function dealOf(data: DealJobData): Deal | undefined {
  return data.deal ?? (data.d ? unpackDeal(data.d, data.dealId) : undefined);
}

/** The job's data without its deal, packed or not: what a finished job keeps. */
export function withoutDeal(data: DealJobData): DealJobData {
  const { deal: _deal, d: _d, ...rest } = data;
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
    backoff: { type: 'realty' },
  };
}
