/**
 * One run of a deal job: what its steps (steps.ts) learn as they go, and how the run
 * ends its row (finish) or lets go of its deal (forget). One object a run, with no closures
 * of its own: the bench counts a worker's cost per deal.
 */
import type { Job } from 'bullmq';
import { kindOf, type DocflowKind } from '../../docflows/registry.js';
import type { Deal } from '../../domain/deal.js';
import type { BankProfile } from '../../input/profile.js';
import { propertyKeyOf, type PropertyKey } from '../../input/property-key.js';
import type { Logger } from '../../logger.js';
import { recordOutcome, type NewOutcome } from '../../outcomes/record-outcome.js';
import type { OutcomeRecord } from '../../domain/outcome.js';
import { dealOf, jobDataOf, storedJobData, type DealJobData } from '../../queue/job-data.js';
import { LockLostError } from './job-boundary.js';
import type { DealProcessorContext } from './context.js';
import { personFilter } from '../../privacy/name-filter.js';
import { personsOf } from '../../privacy/persons.js';
import { maskPersonalData } from '../redact.js';

export type DealJob = Job<DealJobData, OutcomeRecord>;

/** An outcome as a step decides it: the run adds the row, the deal, the attempt and the time. */
export type Final = Omit<OutcomeRecord, 'row' | 'dealId' | 'attempts' | 'finishedAt'>;

/** What an outcome says of the row's deal in the ledger (RecordOptions.ledger without the run's bank and resubmit). */
export type LedgerNote = { requestId?: string; via?: 'answer' | 'feed' | 'operator'; keepClaim?: boolean };

export class DealRun {
  readonly batch: string;
  readonly row: number;
  readonly dealId: string;
  /** This run's try, 1-based. */
  readonly attempt: number;
  /** The job's key in Redis (the ledger's holder of a claim, the job an outcome strips). */
  readonly jobKey: string;
  /** The docflow type its batch files (src/docflows/). */
  readonly kind: DocflowKind;
  /** The deal's key in the ledger: its dealId, or more for an extract (DocflowKind.ledgerKey, kept in the job). */
  readonly ledgerKey: string;
  /** The deal as the job brought it (undefined once its row had an outcome). */
  readonly deal: Deal | undefined;
  /** The batch's profile, once read: its representative is a person the gateway's text may name. */
  profile: BankProfile | undefined;
  bank = '';
  /** Known once the row gives it or suggest finds it; every outcome after that carries it. */
  cadastralNumber: string | undefined;
  /** The content ids of the row's uploaded files (upload-documents.ts), for its docflow: one a document, in rowDocuments' order. */
  uploaded: Array<{ contentId: string; signatureIds: string[] }> | undefined;
  /** The content ids of the profile's power of attorney, uploaded for this run's docflow (a lift's). */
  uploadedAttorney: { contentId: string; signatureIds: string[] } | undefined;
  /** What suggest found in this run: the claim checkpoints it. */
  found: string | undefined;
  private child: Logger | undefined;
  private key: PropertyKey | undefined;
  private keyOf: string | undefined;

  constructor(
    readonly ctx: DealProcessorContext,
    readonly job: DealJob,
    readonly token: string | undefined,
  ) {
    // A waiting job's hash has no batch and dealId (its id has them): the run, its outcome and the
    // data a finished job keeps have them again.
    job.data = jobDataOf(job.id, job.data);
    const { batch, row, dealId } = job.data;
    const deal = dealOf(job.data);
    this.batch = batch;
    this.row = row;
    this.dealId = dealId;
    this.deal = deal;
    this.kind = kindOf(job.data.type);
    this.ledgerKey = job.data.key ?? dealId;
    this.attempt = job.attemptsMade + 1;
    this.jobKey = `${job.queueQualifiedName}:${job.id}`;
    this.cadastralNumber = deal?.cadastralNumber;
  }

  get resubmit(): boolean {
    return this.job.data.resubmit === true;
  }

  get exhausted(): DealJobData['exhausted'] {
    return this.job.data.exhausted;
  }

  /** The row's persons masked in a text: the deal and, once read, the profile's representative. */
  mask(text: string): string {
    return maskPersonalData(text, this.deal, this.profile);
  }

  /**
   * The filter of the row's persons' names its claim keeps in the ledger entry, for the news
   * feed to mask a registry error with (src/privacy/name-filter.ts); '' once the deal is gone.
   */
  personFilter(): string {
    return this.deal ? personFilter(personsOf(this.deal, this.profile)) : '';
  }

  /** The job's logger, made when it first logs (a child logger costs a serialisation of its bindings). */
  log(): Logger {
    return (this.child ??= this.ctx.logger.child({ batch: this.batch, row: this.row, dealId: this.dealId, attempt: this.attempt }));
  }

  /**
   * The property the row is for: its cadastral number (the row's, or the one suggest found) and its
   * address. Made once per cadastral number: the claim and the outcome each pass it on (its canonical
   * address is a dozen regular expressions, its stored form a SHA-256: storedProperty keeps that per key).
   */
  property(): PropertyKey {
    if (this.key === undefined || this.keyOf !== this.cadastralNumber) {
      this.key = propertyKeyOf(this.deal ?? {}, this.cadastralNumber);
      this.keyOf = this.cadastralNumber;
    }
    return this.key;
  }

  /** The ledger's part of an outcome that speaks of the deal. */
  ledger(note?: LedgerNote): NonNullable<NewOutcome['ledger']> {
    return {
      bank: this.bank,
      type: this.kind.type,
      ...(this.ledgerKey !== this.dealId && { dealId: this.ledgerKey }),
      resubmit: this.resubmit,
      property: this.property(),
      ...note,
    };
  }

  /** Writes the row's one outcome (or the docflow the ledger says the deal has instead), and returns it. */
  async finish(fields: Final, ledger: NewOutcome['ledger']): Promise<OutcomeRecord> {
    const record: OutcomeRecord = {
      row: this.row,
      dealId: this.dealId,
      attempts: this.attempt,
      finishedAt: new Date().toISOString(),
      ...fields,
    };
    if (this.cadastralNumber && !record.cadastralNumber) record.cadastralNumber = this.cadastralNumber;
    const { job, ctx } = this;
    // A row that did not reach the registry may carry the gateway's text, in its code as in its
    // message; it goes to the outcome, the log line and the Error BullMQ keeps. (A submitted
    // row's text is ours: masking it would only cost a pattern per successful row.)
    const done = await recordOutcome(ctx.outcomes, {
      batch: this.batch,
      job: { key: this.jobKey, data: job.data },
      record,
      ledger,
      mask: (text) => this.mask(text),
    });
    if (done.kind !== 'recorded') throw new Error(`the outcome of row ${this.row} was not written (${done.kind})`);
    const written = done.record;
    if (done.conflict) {
      this.log().error(
        {
          docflowId: written.docflowId,
          ledgerDocflowId: done.conflict.docflowId,
          ledgerBatch: done.conflict.batch,
          ledgerRow: done.conflict.row,
        },
        'this deal now has two docflows at the gateway; the ledger keeps the first',
      );
    }
    job.data = done.data;
    if (ctx.logger.isLevelEnabled('info'))
      this.log().info(
        { outcome: written.outcome, httpStatus: written.httpStatus, docflowId: written.docflowId, errorCode: written.errorCode },
        'deal finished',
      );
    ctx.onOutcome?.(written, this.kind.type);
    return written;
  }

  /** Once a row has its outcome, its personal data leaves Redis: the job keeps only its keys. */
  async forget(): Promise<void> {
    const { job, ctx, token } = this;
    const done = await recordOutcome(ctx.outcomes, {
      job: { key: this.jobKey, data: job.data },
      updateJob: (data) => ctx.updateJobData(job, token, data),
    });
    if (done.kind === 'kept' && done.data) job.data = done.data;
  }

  /** Puts the job's data back with `patch` merged in, while this run holds its lock. */
  async patch(patch: Partial<DealJobData>): Promise<void> {
    const data = { ...this.job.data, ...patch };
    // As the job was written: it waits again, and its id has its batch and dealId.
    if (!(await this.ctx.updateJobData(this.job, this.token, storedJobData(data)))) throw new LockLostError(this.job);
    this.job.data = data;
  }
}
