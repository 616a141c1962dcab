/** What a step of a deal job decides (src/worker/deal/steps.ts); jobs/deal.ts makes it BullMQ's. */
import type { NewOutcome } from '../../outcomes/record-outcome.js';
import type { OutcomeRecord } from '../../domain/outcome.js';
import type { DealJobData } from '../../queue/job-data.js';
import type { Final } from './run.js';

export type Decision =
  /** Record this outcome: the job completes with it, or fails with no try left when the machinery failed (failsJob). */
  | { kind: 'outcome'; fields: Final; ledger: NewOutcome['ledger'] }
  /** The row has its outcome already: the job ends with it as with a new one, and its deal leaves Redis. */
  | { kind: 'done'; record: OutcomeRecord }
  /** Back after `ms` without spending a try, with `patch` merged into the job's data. */
  | { kind: 'delay'; ms: number; patch?: Partial<DealJobData> }
  /** The session was refused: every worker pauses, and the job goes back to waiting unspent. */
  | { kind: 'wait' }
  /** The batch's load failed or died: no outcome (its rows were never the batch's), its deal leaves Redis. */
  | { kind: 'drop' }
  /** The job fails for good without a new outcome: its row has one, a failure of the machinery. */
  | { kind: 'stop'; message: string }
  /** Thrown as it is: a retry (a plain Error with its cause, for the backoff) or one of BullMQ's signals. */
  | { kind: 'fail'; error: unknown };

/** The session was refused: wait for it, unspent. */
export const WAIT: Decision = { kind: 'wait' };
