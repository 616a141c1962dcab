/**
 * The net under the processor: a job BullMQ failed by itself (stalled too often) still gets
 * its one outcome, with its batch's expiry, and its personal data leaves Redis. The
 * processor's own outcome comes first: the net writes one only where the row has none.
 */
import type { Job, Worker } from 'bullmq';
import type { Logger } from '../logger.js';
import type { BatchStore } from '../batch/batch-store.js';
import type { Ledger } from '../ledger/ledger.js';
import type { OutcomeStore } from '../outcomes/store.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { ERROR_CODES } from '../outcomes/error-codes.js';
import { recordOutcome } from '../outcomes/record-outcome.js';
import { kindOf } from '../docflows/registry.js';
import { propertyKeyOf } from '../input/property-key.js';
import { dealOf, jobDataOf, type DealJobData } from '../queue/job-data.js';
import { BatchAbandonedError } from '../queue/batch-abandoned.js';
import { TUNABLES } from '../config.js';
import { maskPersonalData } from './redact.js';

/** The stores a failed job's outcome is read from and written to. */
export interface SafetyNetStores {
  batches: BatchStore;
  ledger: Ledger;
  outcomes: OutcomeStore;
}

export class SafetyNet {
  /** The outcomes being written; close() waits for them. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly stores: SafetyNetStores,
    private readonly logger: Logger,
  ) {}

  /** Catches the worker's failed jobs from now on. */
  watch(worker: Worker<DealJobData, OutcomeRecord>): void {
    worker.on('failed', (job, err) => this.onFailed(job, err));
  }

  /** Resolves when every outcome the net has begun to write is written (or its failure logged). */
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }

  private onFailed(job: Job<DealJobData, OutcomeRecord> | undefined, err: Error): void {
    // Jobs of a batch whose load failed are not rows of it: no outcome.
    if (!job?.finishedOn || err.name === BatchAbandonedError.name) return;
    // A job BullMQ failed by itself comes as its hash has it: without its batch and dealId (its id has them).
    try {
      job.data = jobDataOf(job.id, job.data);
    } catch (e) {
      this.logger.error({ err: { message: String(e) }, job: job.id }, 'could not record a failed job');
      return;
    }
    const net = this.recordFailedJob(job, err).catch((e: unknown) =>
      this.logger.error({ err: { message: String(e) }, batch: job.data.batch, row: job.data.row }, 'could not record a failed job'),
    );
    this.pending.add(net);
    void net.finally(() => this.pending.delete(net));
  }

  private async recordFailedJob(job: Job<DealJobData, OutcomeRecord>, err: Error): Promise<void> {
    const { batches, ledger, outcomes } = this.stores;
    const { batch, row, dealId } = job.data;
    const deal = dealOf(job.data);
    const stalled = /stalled more than allowable limit/.test(err.message);
    const profile = await batches.profile(batch);
    const bank = profile?.organization.inn;
    const entry = bank ? await ledger.read(bank, job.data.key ?? dealId, kindOf(job.data.type).type) : undefined;
    // A worker that died mid-call may have made the docflow: the row says so, and keeps its claim.
    const uncertain = entry?.state === 'sending' && entry.batch === batch && entry.row === row;
    const { ERR_UNCERTAIN, ERR_JOB_STALLED, ERR_JOB_FAILED } = ERROR_CODES;
    const record: OutcomeRecord = {
      row,
      dealId,
      outcome: 'failed',
      attempts: Math.max(1, job.attemptsMade),
      errorCode: (uncertain ? ERR_UNCERTAIN : stalled ? ERR_JOB_STALLED : ERR_JOB_FAILED).code,
      errorMessage: uncertain
        ? `its worker stopped ${TUNABLES.maxStalls + 1} times while it ran, once during a call that may have created a docflow; realty-batch retry ${batch} looks for it in the news feed before sending it again`
        : stalled
          ? `its worker stopped ${TUNABLES.maxStalls + 1} times while it ran (no call of it was in flight); realty-batch retry ${batch} sends it again`
          : // Whatever the processor threw (a masked message, or a defect's own): masked by recordOutcome.
            err.message,
      finishedAt: new Date().toISOString(),
    };
    // Written only when the row has no outcome: the processor's own comes first.
    await recordOutcome(outcomes, {
      batch,
      job: { key: `${job.queueQualifiedName}:${job.id}`, data: job.data },
      record,
      ifAbsent: true,
      ledger: bank
        ? {
            bank,
            resubmit: job.data.resubmit === true,
            keepClaim: uncertain,
            ...(deal && { property: propertyKeyOf(deal) }),
          }
        : undefined,
      mask: (text) => maskPersonalData(text, deal, profile),
    });
  }
}
