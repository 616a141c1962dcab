/**
 * What crosses the boundary with BullMQ besides outcomes: an error whose message and
 * stack BullMQ keeps (failedReason, stacktrace, the events stream), masked for the row's
 * persons; and the sign that a run lost its job to another worker.
 */
import { DelayedError, RateLimitError, WaitingError, type Job } from 'bullmq';
import type { Deal } from '../../domain/deal.js';
import type { BankProfile } from '../../input/profile.js';
import type { OutcomeRecord } from '../../domain/outcome.js';
import type { DealJobData } from '../../queue/job-data.js';
import { maskPersonalData } from '../redact.js';

/** An error on its way to BullMQ, its message and stack masked in place (its class, which BullMQ reads, kept). */
export function maskThrown(err: unknown, deal: Deal | undefined, profile: BankProfile | undefined): unknown {
  // BullMQ's signals carry no text of ours and are thrown on every wait: left alone, and cheap.
  if (err instanceof DelayedError || err instanceof WaitingError || err instanceof RateLimitError) return err;
  if (!(err instanceof Error)) return new Error(maskPersonalData(String(err), deal, profile));
  err.message = maskPersonalData(err.message, deal, profile);
  if (err.stack) err.stack = maskPersonalData(err.stack, deal, profile);
  return err;
}

/** The job's run no longer holds its lock: another worker took the job over. */
export class LockLostError extends Error {
  constructor(job: Job<DealJobData, OutcomeRecord>) {
    super(`job ${job.id ?? ''} is no longer this worker's (its lock was lost: another worker took it over)`);
    this.name = 'LockLostError';
  }
}
