/**
 * How a row gets its one outcome, wherever it ends: the processor's own outcomes, the
 * processor's runs that find the outcome already there (or none due), and the worker's
 * net under jobs BullMQ fails by itself. One function, so that each rule holds for all:
 * - text of a row that did not reach the registry is masked for its persons;
 * - the job loses its deal (personal data) with the outcome, in the same script;
 * - the ledger may say the deal has a docflow after all: the row records that instead;
 * - a write that fails (a passing Redis error) is tried again on its own, never the gateway call.
 */
import pRetry from 'p-retry';
import { TUNABLES } from '../config.js';
import { withoutDeal, type DealJobData } from '../queue/job-data.js';
import type { OutcomeStore, RecordOptions, RecordResult } from './store.js';
import { alreadySubmitted, ownDocflow, SUBMITTED_OUTCOMES, type OutcomeRecord } from '../domain/outcome.js';

/** The job of a row: its Redis key and its data (with its deal until the row has its outcome). */
export interface RowJob {
  key: string;
  data: DealJobData;
}

export interface NewOutcome {
  batch: string;
  job: RowJob;
  record: OutcomeRecord;
  /** The row's deal in the ledger (RecordOptions.ledger); none for an outcome that says nothing of it. */
  ledger?: RecordOptions['ledger'];
  /** Only when the row has no outcome yet (the net under jobs BullMQ fails by itself). */
  ifAbsent?: boolean;
  /** Masks the row's persons in the code and message of an outcome that did not reach the registry. */
  mask?: (text: string) => string;
}

/**
 * The row has its outcome already (or, its batch abandoned, none is due): nothing is
 * written but the job's data without its deal, through `updateJob` (a write that holds the
 * job's lock: a run that lost its job must not write into another worker's).
 */
export interface KeptOutcome {
  job: RowJob;
  record?: undefined;
  updateJob(data: DealJobData): Promise<boolean>;
}

export type Recorded =
  /** `record` is the row's outcome now; `data` the job's data without its deal. */
  | { kind: 'recorded'; record: OutcomeRecord; data: DealJobData; conflict?: Extract<RecordResult, { kind: 'conflict' }>['deal'] }
  /** `ifAbsent`, and the row had an outcome: nothing written. */
  | { kind: 'exists' }
  /** A kept outcome: `data` is the job's data without its deal once written, undefined when it had none or the lock was lost. */
  | { kind: 'kept'; data: DealJobData | undefined };

const RETRY = { retries: TUNABLES.outcomeWriteRetries, minTimeout: TUNABLES.outcomeWriteRetryMs };

export async function recordOutcome(store: OutcomeStore, write: NewOutcome | KeptOutcome): Promise<Recorded> {
  const rest = withoutDeal(write.job.data);
  // In memory or packed (`c`): either is personal data.
  const deal = write.job.data.deal ?? write.job.data.c;
  if (!write.record) return { kind: 'kept', data: deal !== undefined && (await write.updateJob(rest)) ? rest : undefined };
  const { batch, record, ledger, ifAbsent, mask } = write;
  if (mask && !SUBMITTED_OUTCOMES.has(record.outcome)) masked(record, mask);
  // The outcome and the job without its deal in one script: a job whose deal is gone always has its outcome.
  const options: RecordOptions = { ledger, ifAbsent, job: deal ? { key: write.job.key, data: JSON.stringify(rest) } : undefined };
  let written = await persist(store, batch, record, options);
  if (written.kind === 'exists') return written;
  if (written.kind !== 'submitted')
    return { kind: 'recorded', record, data: rest, ...(written.kind === 'conflict' && { conflict: written.deal }) };
  // The deal has a docflow after all (the feed found a lost answer, or another row made it): the row gets it.
  const instead = insteadOf(record, written);
  options.ledger =
    written.own && ledger
      ? {
          bank: ledger.bank,
          resubmit: ledger.resubmit,
          via: written.via,
          ...(ledger.type && { type: ledger.type }),
          ...(ledger.dealId && { dealId: ledger.dealId }),
        }
      : undefined;
  written = await persist(store, batch, instead, options);
  if (written.kind === 'exists') return written;
  return { kind: 'recorded', record: instead, data: rest, ...(written.kind === 'conflict' && { conflict: written.deal }) };
}

function persist(store: OutcomeStore, batch: string, record: OutcomeRecord, options: RecordOptions): Promise<RecordResult> {
  const write = () => store.record(batch, record, options);
  return write().catch(() => pRetry(write, RETRY));
}

/** The code and message of an outcome, masked in place. */
function masked(record: OutcomeRecord, mask: (text: string) => string): void {
  if (record.errorMessage) record.errorMessage = mask(record.errorMessage);
  if (record.errorCode) record.errorCode = mask(record.errorCode);
}

/** What a row records when the ledger says its deal has a docflow: its own, or another row's. */
function insteadOf(record: OutcomeRecord, written: Extract<RecordResult, { kind: 'submitted' }>): OutcomeRecord {
  const { row, dealId, attempts } = record;
  const instead = written.own
    ? ownDocflow(row, dealId, written.deal, written.via, attempts)
    : alreadySubmitted(row, dealId, written.deal, attempts);
  if (record.cadastralNumber) instead.cadastralNumber = record.cadastralNumber;
  return instead;
}
