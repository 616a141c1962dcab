/**
 * The processor of `deal` jobs: resolve the cadastral number, create the
 * docflow, record exactly one outcome. Retries and the session pause are
 * decided by src/worker/decide.ts; this file only applies the decision at the
 * BullMQ boundary.
 */
import { DelayedError, RateLimitError, UnrecoverableError, WaitingError, type Job, type Processor } from 'bullmq';
import pRetry from 'p-retry';
import type { Deal } from '../src/input/deal.js';
import type { BankProfile } from '../src/input/profile.js';
import type { Logger } from '../src/logger.js';
import type { BatchStore } from '../src/outcomes/batches.js';
import type { OutcomeStore } from '../src/outcomes/store.js';
import { alreadySubmitted, submittedElsewhere, SUBMITTED_OUTCOMES, type OutcomeRecord } from '../src/outcomes/types.js';
import type { DealJobData } from '../src/queue/job-data.js';
import type { RealtyClient } from '../src/realty/client.js';
import { DOCFLOW_TYPE } from '../src/realty/types.js';
import { buildEncumbranceRequest } from '../src/worker/build-request.js';
import { decide, describeApiError } from '../src/worker/decide.js';
import { maskPersonalData } from '../src/worker/redact.js';
import { resolveCadastralNumber, type Resolution } from '../src/worker/resolve-cadastral.js';

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
  /**
   * Before each gateway request (`--rate`): resolves when the request may go, or
   * throws BullMQ's RateLimitError, which puts the job back to waiting unspent.
   */
  throttle?(): Promise<void>;
  /** Each recorded outcome, for the fleet's counters. */
  onOutcome?(record: OutcomeRecord): void;
  /** While the circuit breaker is open: when to try again (ms since epoch); 0 when closed. */
  holdUntil?(): number;
}

/**
 * A job of a batch still loading looks again after 2 s, then 4, 8, ... at most
 * 5 minutes: a batch whose loader died waits, cheaply, to be loaded again.
 */
export function loadingRecheckMs(timesHeld: number): number {
  return Math.min(300_000, 2000 * 2 ** Math.min(8, Math.max(0, timesHeld - 1)));
}

/**
 * A job of a batch whose load failed or died: it is dropped without an outcome
 * (its load did not finish, so its rows were never the batch's), and loading the
 * input again makes it anew.
 */
export class BatchAbandonedError extends UnrecoverableError {
  constructor(batch: string) {
    super(`batch ${batch} did not load completely; nothing of it is sent`);
    this.name = 'BatchAbandonedError';
  }
}
/** A batch's profile is re-read this often, so a corrected profile reaches long-running workers. */
const PROFILE_TTL_MS = 60_000;

type Final = Omit<OutcomeRecord, 'row' | 'dealId' | 'attempts' | 'finishedAt'>;

export function createDealProcessor(ctx: DealProcessorContext): Processor<DealJobData, OutcomeRecord> {
  const profiles = new Map<string, { profile: BankProfile; at: number }>();
  const expiries = new Map<string, number | undefined>();

  /** The batch's expiry, for the outcomes hash (which may not exist until this outcome). */
  async function expiryOf(batch: string): Promise<number | undefined> {
    if (!expiries.has(batch)) {
      if (expiries.size > 1000) expiries.clear();
      expiries.set(batch, await ctx.batches.expiresAt(batch));
    }
    return expiries.get(batch);
  }
  const loaded = new Set<string>();

  async function profileOf(batch: string): Promise<BankProfile> {
    const cached = profiles.get(batch);
    if (cached && Date.now() - cached.at < PROFILE_TTL_MS) return cached.profile;
    const profile = await ctx.batches.profile(batch);
    if (!profile) throw new UnrecoverableError(`batch ${batch} has no bank profile in Redis`);
    if (profiles.size > 100) profiles.clear();
    profiles.set(batch, { profile, at: Date.now() });
    return profile;
  }

  /** True when the batch's file was read to its end; a loaded batch stays loaded. */
  async function batchReady(batch: string): Promise<'ready' | 'loading' | 'failed'> {
    if (loaded.has(batch)) return 'ready';
    const state = await ctx.batches.state(batch);
    if (state === 'loaded') {
      if (loaded.size > 1000) loaded.clear();
      loaded.add(batch);
      return 'ready';
    }
    return state === 'loading' ? 'loading' : 'failed';
  }

  return async (job: Job<DealJobData, OutcomeRecord>, token?: string) => {
    const { batch, row, dealId } = job.data;
    const attempt = job.attemptsMade + 1;
    // The job's logger, made when it first logs (a child logger costs a serialisation of its bindings).
    let child: Logger | undefined;
    const log = (): Logger => (child ??= ctx.logger.child({ batch, row, dealId, attempt }));

    // Nothing of a batch is sent before its whole file was read: a file broken
    // half-way must not leave half a night submitted.
    const readiness = await batchReady(batch);
    if (readiness === 'loading') {
      await job.moveToDelayed(Date.now() + loadingRecheckMs(job.attemptsStarted), token);
      throw new DelayedError();
    }
    if (readiness === 'failed') {
      await forget(job);
      throw new BatchAbandonedError(batch);
    }

    const deal = job.data.deal;
    const withLedger = !job.data.resubmit;
    // A job's first run asks suggest before Redis: nearly every such row has no outcome,
    // no checkpoint and a deal the loader found in no ledger, so the lookup then goes with
    // the checkpoint, one round trip fewer on the way to the docflow. Whatever the lookup
    // finds still decides, as on any other run: at worst one suggest was asked for nothing.
    // "First" keeps that rare: no try spent, never stalled, never held by the breaker (each
    // may have left a checkpoint), and no --rate, under which a job put back after its
    // checkpoint would spend a request on it (and a Redis round trip saves nothing when
    // the rate is the bound). A job held back while its batch was loading is still first;
    // so is one the session pause put back (rare: it may ask suggest once more).
    const first = deal && !deal.cadastralNumber && !ctx.throttle && job.attemptsMade === 0 && !job.stalledCounter && !job.data.holds;
    let early: Resolution | { failed: unknown } | undefined;
    if (first) {
      early = await resolveCadastralNumber(deal, ctx.client).catch((failed: unknown) => ({ failed }));
    }
    const found = early && 'kind' in early && early.kind === 'found' ? early.cadastralNumber : undefined;

    // A re-run after a crash or a stall, of a row that already reached the registry; and
    // whether the deal reached it from another row or batch. Both in one round trip.
    const { earlier, ledger, cadastralNumber: checkpoint, written } = found
      ? await ctx.outcomes.lookupAndCheckpoint(batch, row, dealId, withLedger, found, await expiryOf(batch))
      : { ...(await ctx.outcomes.lookup(batch, row, dealId, withLedger)), written: false };
    if (earlier && earlier.dealId === dealId && SUBMITTED_OUTCOMES.has(earlier.outcome)) {
      await forget(job);
      return earlier;
    }

    let cadastralNumber = checkpoint ?? deal?.cadastralNumber;

    const finish = async (fields: Final, personal?: Deal): Promise<OutcomeRecord> => {
      const record: OutcomeRecord = { row, dealId, attempts: attempt, finishedAt: new Date().toISOString(), ...fields };
      if (cadastralNumber && !record.cadastralNumber) record.cadastralNumber = cadastralNumber;
      if (record.errorMessage && personal) record.errorMessage = maskPersonalData(record.errorMessage, personal);
      // The outcome and the job without its deal (personal data) in one script: a job whose
      // deal is gone always has its outcome.
      const expiresAt = await expiryOf(batch);
      const { deal: _removed, ...rest } = job.data;
      const strip = job.data.deal ? { key: `${job.queueQualifiedName}:${job.id}`, data: JSON.stringify(rest) } : undefined;
      const write = (): Promise<void> => ctx.outcomes.record(batch, record, { expiresAt, job: strip });
      // After the gateway created a docflow, losing its id to a passing Redis error
      // would send the deal again on the job's retry: the write is retried on its own.
      await write().catch(() => pRetry(write, { retries: 5, minTimeout: 200 }));
      job.data = rest;
      if (ctx.logger.isLevelEnabled('info')) log().info({ outcome: record.outcome, httpStatus: record.httpStatus, docflowId: record.docflowId, errorCode: record.errorCode }, 'deal finished');
      ctx.onOutcome?.(record);
      return record;
    };

    if (!deal) {
      // A finished job run again (a retry from the dashboard): its deal left Redis with its
      // outcome. The outcome stands; `realty-batch retry` reads the deal from the input again.
      const message = `this job's deal data was removed when the row got its outcome; run: realty-batch retry ${batch}`;
      if (earlier) {
        log().warn({ outcome: earlier.outcome }, message);
        throw new UnrecoverableError(message);
      }
      const record = await finish({ outcome: 'failed', errorCode: 'ERR_DATA_REMOVED', errorMessage: message });
      throw new UnrecoverableError(record.errorMessage);
    }

    if (submittedElsewhere(ledger, batch, row)) {
      const { outcome, docflowId, errorMessage } = alreadySubmitted(row, dealId, ledger, attempt);
      return finish({ outcome, docflowId, errorMessage });
    }

    let created: Awaited<ReturnType<RealtyClient['createDocflow']>>;
    let checkpointed: Promise<void> | undefined;
    try {
      if (!cadastralNumber) {
        if (early && 'failed' in early) throw early.failed;
        const resolution = early ?? (await ctx.throttle?.(), await resolveCadastralNumber(deal, ctx.client));
        if (resolution.kind !== 'found') {
          const record = await finish(
            { outcome: resolution.kind, errorCode: resolution.kind.toUpperCase(), errorMessage: resolution.message, candidates: resolution.cadastralNumbers },
            deal,
          );
          throw new UnrecoverableError(record.errorMessage);
        }
        cadastralNumber = resolution.cadastralNumber;
        // Checkpoint, written before the docflow is asked for (on a first run, with the
        // lookup): a retry of this row (or a run after a crash) sends the same cadastral
        // number, which the gateway's requestId check expects. The request is built while
        // Redis answers.
        if (!written) {
          checkpointed = ctx.outcomes.checkpoint(batch, row, cadastralNumber, await expiryOf(batch));
          // Awaited below; should building the request throw first, its failure is not unhandled.
          checkpointed.catch(() => undefined);
        }
      }
      const request = buildEncumbranceRequest(deal, cadastralNumber, await profileOf(batch), ctx.apiUrl, job.data.resubmit ? batch : undefined);
      await checkpointed;
      await ctx.throttle?.();
      created = await ctx.client.createDocflow(DOCFLOW_TYPE, request);
    } catch (err) {
      if (err instanceof UnrecoverableError || err instanceof RateLimitError) throw err;
      const decision = decide(err);
      const described = describeApiError(err);
      const errorMessage = maskPersonalData(described.errorMessage, deal);
      if (decision.action === 'pause') {
        await ctx.pauseForSession();
        // Back to waiting without spending an attempt: the row is not finished.
        await job.moveToWait(token);
        throw new WaitingError();
      }
      const holds = job.data.holds ?? 0;
      const hold = decision.action === 'retry' && holds < ctx.attempts ? (ctx.holdUntil?.() ?? 0) : 0;
      if (hold > 0) {
        // The breaker is open: the gateway is down for everyone, not for this deal. It
        // waits for the cool-down without spending a try, as many times as it has tries:
        // a gateway down for good still ends the row (unavailable or failed), not a run
        // that never ends.
        log().info({ errorCode: described.errorCode, httpStatus: described.httpStatus, holds: holds + 1 }, 'gateway down (breaker open): waiting without spending a try');
        await job.updateData({ ...job.data, holds: holds + 1 });
        await job.moveToDelayed(hold + Math.round(Math.random() * 1000), token);
        throw new DelayedError();
      }
      if (decision.action === 'retry' && attempt < ctx.attempts) {
        log().warn({ errorCode: described.errorCode, httpStatus: described.httpStatus, attemptsLeft: ctx.attempts - attempt }, 'transient failure, will retry');
        throw new Error(errorMessage, { cause: err });
      }
      const outcome = decision.action === 'record' ? decision.outcome : decision.exhausted;
      await finish({ outcome, ...described, errorMessage }, deal);
      throw new UnrecoverableError(errorMessage);
    }
    return finish({ outcome: created.status === 200 ? 'queued' : 'suspended', docflowId: created.docflow.docflowId, httpStatus: created.status }, deal);
  };
}

/** Once a row has its outcome, its personal data leaves Redis: the job keeps only its keys. */
async function forget(job: Job<DealJobData, OutcomeRecord>): Promise<void> {
  if (!job.data.deal) return;
  const { deal: _removed, ...rest } = job.data;
  await job.updateData(rest);
}
