/**
 * What a deal job's processor gets from the worker that runs it: the gateway client,
 * the stores, and the worker's own hooks (breaker, session pause, rate limit). The
 * processor itself is jobs/deal.ts; createDealWorker receives it.
 */
import type { Job } from 'bullmq';
import type { Logger } from '../../logger.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { BatchStore } from '../../batch/batch-store.js';
import type { OutcomeStore } from '../../outcomes/store.js';
import type { OutcomeRecord } from '../../domain/outcome.js';
import type { DocflowType } from '../../domain/gateway.js';
import type { DealJobData, StoredJobData } from '../../queue/job-data.js';
import type { RealtyClient } from '../../realty/client.js';
import type { ContentStore } from '../content-store.js';

export interface DealProcessorContext {
  client: RealtyClient;
  outcomes: OutcomeStore;
  ledger: Ledger;
  batches: BatchStore;
  /** The batch's uploaded files (rows that name files); without it such a row fails. */
  contents?: ContentStore;
  /** Takes the news feed's cursor if the deployment has none (before the first claim). */
  ensureFeed(): Promise<void>;
  /** This worker's database id (src/db/deployment.ts): a batch loaded into another database is not run here. */
  databaseId?: () => Promise<string>;
  /** Base url for content links. */
  apiUrl: string;
  /** Tries per deal for transient failures (`--attempts`). */
  attempts: number;
  /** How long past a try's due time a row waits for the feed before it ends ERR_UNCERTAIN. */
  reconcileTimeoutMs: number;
  /** The gateway's per-request timeout: a docflow call ends within it, counted from its claim. */
  timeoutMs: number;
  /**
   * Writes a job's data only while this run holds the job's lock: a run whose job was
   * taken over must not write the deal back into a job another worker finished.
   */
  updateJobData(job: Job<DealJobData, OutcomeRecord>, token: string | undefined, data: StoredJobData): Promise<boolean>;
  logger: Logger;
  /** Stops every worker on every host: the session was refused. */
  pauseForSession(): Promise<void>;
  /**
   * Before each gateway request (`--rate`): resolves when the request may go, or
   * throws BullMQ's RateLimitError, which puts the job back to waiting unspent.
   */
  throttle?(): Promise<void>;
  /** Each recorded outcome and its row's docflow type, for the fleet's counters. */
  onOutcome?(record: OutcomeRecord, type: DocflowType): void;
  /** While the circuit breaker is open: when to try again (ms since epoch); 0 when closed. */
  holdUntil?(): number;
}
