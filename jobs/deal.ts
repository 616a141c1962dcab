/**
 * The processor of `deal` jobs: resolve the cadastral number, create the
 * docflow, record exactly one outcome. Retries and the session pause are
 * decided by src/worker/decide.ts; this file only applies the decision at the
 * BullMQ boundary.
 */
import { UnrecoverableError, WaitingError, type Job, type Processor } from 'bullmq';
import type { BankProfile } from '../src/input/profile.js';
import type { Logger } from '../src/logger.js';
import type { BatchStore } from '../src/outcomes/batches.js';
import type { OutcomeStore } from '../src/outcomes/store.js';
import { SUBMITTED_OUTCOMES, type OutcomeRecord } from '../src/outcomes/types.js';
import type { DealJobData } from '../src/queue/job-data.js';
import type { RealtyClient } from '../src/realty/client.js';
import { DOCFLOW_TYPE } from '../src/realty/types.js';
import { buildEncumbranceRequest } from '../src/worker/build-request.js';
import { decide, describeApiError } from '../src/worker/decide.js';
import { maskPersonalData } from '../src/worker/redact.js';
import { resolveCadastralNumber } from '../src/worker/resolve-cadastral.js';

export interface DealProcessorContext {
  client: RealtyClient;
  outcomes: OutcomeStore;
  batches: BatchStore;
  /** Base url for content links. */
  apiUrl: string;
  /** Tries per deal for transient failures (`--attempts`). */
  attempts: number;
  logger: Logger;
  /** Stops every worker on every host: the session was refused. */
  pauseForSession(): Promise<void>;
}

export function createDealProcessor(ctx: DealProcessorContext): Processor<DealJobData, OutcomeRecord> {
  const profiles = new Map<string, BankProfile>();

  async function profileOf(batch: string): Promise<BankProfile> {
    let profile = profiles.get(batch);
    if (!profile) {
      profile = await ctx.batches.profile(batch);
      if (!profile) throw new UnrecoverableError(`batch ${batch} has no bank profile in Redis`);
      if (profiles.size > 100) profiles.clear();
      profiles.set(batch, profile);
    }
    return profile;
  }

  return async (job: Job<DealJobData, OutcomeRecord>, token?: string) => {
    const { batch, row, deal } = job.data;
    const attempt = job.attemptsMade + 1;
    const log = ctx.logger.child({ batch, row, dealId: deal.dealId, attempt });
    let cadastralNumber = job.data.cadastralNumber ?? deal.cadastralNumber;

    const finish = async (fields: Omit<OutcomeRecord, 'row' | 'dealId' | 'attempts' | 'finishedAt'>): Promise<OutcomeRecord> => {
      const record: OutcomeRecord = { row, dealId: deal.dealId, attempts: attempt, finishedAt: new Date().toISOString(), ...fields };
      if (cadastralNumber && !record.cadastralNumber) record.cadastralNumber = cadastralNumber;
      if (record.errorMessage) record.errorMessage = maskPersonalData(record.errorMessage, deal);
      await ctx.outcomes.record(batch, record);
      log.info({ outcome: record.outcome, httpStatus: record.httpStatus, docflowId: record.docflowId, errorCode: record.errorCode }, 'deal finished');
      return record;
    };

    // A re-run after a crash or a stall, of a row that already reached the registry.
    const earlier = await ctx.outcomes.get(batch, row);
    if (earlier && SUBMITTED_OUTCOMES.has(earlier.outcome)) return earlier;

    if (!job.data.resubmit) {
      const entry = await ctx.outcomes.ledger(deal.dealId);
      if (entry) {
        return finish({
          outcome: 'already_submitted',
          docflowId: entry.docflowId,
          errorMessage: `submitted before (batch ${entry.batch}, row ${entry.row}, ${entry.outcome}, ${entry.at}); --resubmit sends it again`,
        });
      }
    }

    try {
      if (!cadastralNumber) {
        const resolution = await resolveCadastralNumber(deal, ctx.client);
        if (resolution.kind !== 'found') {
          const record = await finish({ outcome: resolution.kind, errorCode: resolution.kind.toUpperCase(), errorMessage: resolution.message });
          throw new UnrecoverableError(record.errorMessage);
        }
        cadastralNumber = resolution.cadastralNumber;
        // Checkpoint: a retry of this job goes straight to the docflow.
        await job.updateData({ ...job.data, cadastralNumber });
      }
      const request = buildEncumbranceRequest(deal, cadastralNumber, await profileOf(batch), ctx.apiUrl, job.data.resubmit ? batch : undefined);
      const { status, docflow } = await ctx.client.createDocflow(DOCFLOW_TYPE, request);
      return await finish({ outcome: status === 200 ? 'queued' : 'suspended', docflowId: docflow.docflowId, httpStatus: status });
    } catch (err) {
      if (err instanceof UnrecoverableError) throw err;
      const decision = decide(err);
      const described = describeApiError(err);
      const errorMessage = maskPersonalData(described.errorMessage, deal);
      if (decision.action === 'pause') {
        await ctx.pauseForSession();
        // Back to waiting without spending an attempt: the row is not finished.
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (decision.action === 'retry' && attempt < ctx.attempts) {
        log.warn({ errorCode: described.errorCode, httpStatus: described.httpStatus, attemptsLeft: ctx.attempts - attempt }, 'transient failure, will retry');
        throw new Error(errorMessage, { cause: err });
      }
      const outcome = decision.action === 'record' ? decision.outcome : decision.exhausted;
      await finish({ outcome, ...described, errorMessage });
      throw new UnrecoverableError(errorMessage);
    }
  };
}
