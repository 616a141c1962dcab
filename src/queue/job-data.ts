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
  /** Checkpoint: the cadastral number once suggest found it, so a retry does not ask again. */
  cadastralNumber?: string;
  /** Times the job waited for an open circuit breaker without spending a try. */
  holds?: number;
}

/** Stable per (batch, deal): the same file loaded twice into one batch adds no second job. */
export function dealJobId(batch: string, dealId: string): string {
  // BullMQ refuses ':' and integer-looking ids; dealIds are the bank's own strings.
  return `${batch}.${Buffer.from(dealId, 'utf8').toString('base64url')}`;
}
