import type { Deal } from '../input/deal.js';

/** The one job kind: submit one deal of one batch. */
export const DEAL_JOB = 'deal';

export interface DealJobData {
  batch: string;
  /** The record's 1-based position in the input. */
  row: number;
  dealId: string;
  /** The deal; removed from Redis once the row has its outcome (it holds personal data). */
  deal?: Deal;
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
