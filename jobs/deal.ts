/**
 * The processor of `deal` jobs: resolve the cadastral number, claim the deal in the
 * ledger, create the docflow, record exactly one outcome. Retries and the session
 * pause are decided by src/worker/decide.ts, who may send a deal by src/ledger/; this
 * file applies their decisions at the BullMQ boundary.
 */
import { randomUUID } from 'node:crypto';
import { DelayedError, RateLimitError, UnrecoverableError, WaitingError, type Job, type Processor } from 'bullmq';
import pRetry from 'p-retry';
import type { Deal } from '../src/input/deal.js';
import { ApiHttpError } from '../src/errors.js';
import type { BankProfile } from '../src/input/profile.js';
import type { Logger } from '../src/logger.js';
import type { ClaimVerdict } from '../src/ledger/ledger.js';
import type { RecordOptions } from '../src/outcomes/store.js';
import { alreadySubmitted, ownDocflow, SUBMITTED_OUTCOMES, type OutcomeRecord } from '../src/outcomes/types.js';
import type { DealJobData } from '../src/queue/job-data.js';
import type { RealtyClient } from '../src/realty/client.js';
import { DOCFLOW_TYPE } from '../src/realty/types.js';
import { buildEncumbranceRequest } from '../src/worker/build-request.js';
import { decide, describeApiError, mayHaveCreated } from '../src/worker/decide.js';
import { maskPersonalData } from '../src/worker/redact.js';
import { resolveCadastralNumber } from '../src/worker/resolve-cadastral.js';
import { LockLostError, maskThrown } from '../src/worker/job-boundary.js';
import type { DealProcessorContext } from '../src/worker/processor-context.js';

export type { DealProcessorContext };

/**
 * A job of a batch still loading looks again after 2 s, then 4, 8, ... at most
 * 5 minutes: a batch whose loader died waits, cheaply, to be loaded again.
 */
export function loadingRecheckMs(timesHeld: number): number {
  return Math.min(300_000, 2000 * 2 ** Math.min(8, Math.max(0, timesHeld - 1)));
}

/** A row whose deal another row holds looks again after 2 s, 4, 8, ... at most a minute. */
export function claimRecheckMs(waits: number): number {
  return Math.min(60_000, 2000 * 2 ** Math.min(5, waits)) * (0.9 + 0.2 * Math.random());
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

  const run = async (job: Job<DealJobData, OutcomeRecord>, token?: string): Promise<OutcomeRecord> => {
    const { batch, row, dealId } = job.data;
    /** Puts the job back for `ms` without spending a try (with `patch` merged into its data). */
    const delay = async (ms: number, patch?: Partial<DealJobData>): Promise<never> => {
      if (patch) {
        const data = { ...job.data, ...patch };
        if (!(await ctx.updateJobData(job, token, data))) throw new LockLostError(job);
        job.data = data;
      }
      await job.moveToDelayed(Date.now() + Math.max(0, Math.round(ms)), token);
      throw new DelayedError();
    };
    /** Once a row has its outcome, its personal data leaves Redis: the job keeps only its keys. */
    const forget = async (): Promise<void> => {
      if (!job.data.deal) return;
      const { deal: _removed, ...rest } = job.data;
      if (await ctx.updateJobData(job, token, rest)) job.data = rest;
    };
    const attempt = job.attemptsMade + 1;
    // Every person of the row, whom the gateway's text may name: the deal as the job brought it
    // (finish strips it from job.data) and, once read, the batch's profile (its representative).
    const persons: { deal: Deal | undefined; profile?: BankProfile } = { deal: job.data.deal };
    const mask = (text: string): string => maskPersonalData(text, persons.deal, persons.profile);
    // The job's logger, made when it first logs (a child logger costs a serialisation of its bindings).
    let child: Logger | undefined;
    const log = (): Logger => (child ??= ctx.logger.child({ batch, row, dealId, attempt }));

    // Nothing of a batch is sent before its whole file was read: a file broken
    // half-way must not leave half a night submitted.
    const readiness = await batchReady(batch);
    if (readiness === 'loading') return delay(loadingRecheckMs(job.attemptsStarted));
    if (readiness === 'failed') {
      await forget();
      throw new BatchAbandonedError(batch);
    }

    // Known once the row gives it or suggest finds it; every outcome after that carries it.
    let cadastralNumber = job.data.deal?.cadastralNumber;

    /** Writes the row's one outcome; the ledger may say the deal has a docflow instead, which is then recorded. */
    const finish = async (fields: Final, options: Omit<RecordOptions, 'job'> = {}): Promise<OutcomeRecord> => {
      const record: OutcomeRecord = { row, dealId, attempts: attempt, finishedAt: new Date().toISOString(), ...fields };
      if (cadastralNumber && !record.cadastralNumber) record.cadastralNumber = cadastralNumber;
      // A row that did not reach the registry may carry the gateway's text, in its code as in its
      // message; it goes to the outcome, the log line and the Error BullMQ keeps. (A submitted
      // row's text is ours: masking it would only cost a pattern per successful row.)
      if (!SUBMITTED_OUTCOMES.has(record.outcome)) {
        if (record.errorMessage) record.errorMessage = mask(record.errorMessage);
        if (record.errorCode) record.errorCode = mask(record.errorCode);
      }
      // The outcome and the job without its deal (personal data) in one script: a job whose
      // deal is gone always has its outcome.
      const { deal: _removed, ...rest } = job.data;
      const strip = job.data.deal ? { key: `${job.queueQualifiedName}:${job.id}`, data: JSON.stringify(rest) } : undefined;
      const write = () => ctx.outcomes.record(batch, record, { ...options, job: strip });
      // After the gateway created a docflow, losing its id to a passing Redis error would
      // leave the row without it: the write is retried on its own, never the gateway call.
      const written = await write().catch(() => pRetry(write, { retries: 5, minTimeout: 200 }));
      if (written.kind === 'submitted') {
        const instead = written.own ? ownDocflow(row, dealId, written.deal, written.via, attempt) : alreadySubmitted(row, dealId, written.deal, attempt);
        return finish(instead, written.own ? { ledger: { bank, resubmit, via: written.via } } : {});
      }
      if (written.kind === 'conflict') {
        log().error({ docflowId: record.docflowId, ledgerDocflowId: written.deal.docflowId, ledgerBatch: written.deal.batch, ledgerRow: written.deal.row }, 'this deal now has two docflows at the gateway; the ledger keeps the first');
      }
      job.data = rest;
      if (ctx.logger.isLevelEnabled('info')) log().info({ outcome: record.outcome, httpStatus: record.httpStatus, docflowId: record.docflowId, errorCode: record.errorCode }, 'deal finished');
      ctx.onOutcome?.(record);
      return record;
    };
    /** A submitted row's job completes with its record; any other outcome fails it, with no try left. */
    const end = async (fields: Final, options: Omit<RecordOptions, 'job'>): Promise<OutcomeRecord> => {
      const record = await finish(fields, options);
      if (SUBMITTED_OUTCOMES.has(record.outcome)) return record;
      // Its message (masked by finish) becomes the job's failedReason, stacktrace and failed event.
      throw new UnrecoverableError(record.errorMessage ?? record.outcome);
    };

    const deal = job.data.deal;
    if (!deal) {
      // A finished job run again (a retry from the dashboard): its deal left Redis with its
      // outcome. The outcome stands; `realty-batch retry` reads the deal from the input again.
      const message = `this job's deal data was removed when the row got its outcome; run: realty-batch retry ${batch}`;
      const [earlier] = await ctx.outcomes.range(batch, row, row);
      if (earlier) {
        log().warn({ outcome: earlier.outcome }, message);
        throw new UnrecoverableError(message);
      }
      return end({ outcome: 'failed', errorCode: 'ERR_DATA_REMOVED', errorMessage: message }, {});
    }

    const profile = await profileOf(batch);
    persons.profile = profile;
    const bank = profile.organization.inn;
    const resubmit = job.data.resubmit === true;
    const exhausted = job.data.exhausted;
    const ledger = (extra: Omit<NonNullable<RecordOptions['ledger']>, 'bank' | 'resubmit'> = {}): RecordOptions['ledger'] => ({ bank, resubmit, ...extra });

    /** A failure before or of the docflow call: retried, the session paused, or the row's outcome. */
    const fail = async (err: unknown, uncertain: boolean): Promise<OutcomeRecord> => {
      if (err instanceof UnrecoverableError || err instanceof RateLimitError || err instanceof DelayedError || err instanceof WaitingError || err instanceof LockLostError) throw err;
      const decision = decide(err);
      // Masked here, before anything of it is logged, thrown or kept in the job's data (`exhausted`).
      const described = describeApiError(err, mask);
      const { errorMessage } = described;
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
        return delay(hold - Date.now() + Math.round(Math.random() * 1000), { holds: holds + 1 });
      }
      if (decision.action === 'retry' && attempt < ctx.attempts) {
        log().warn({ errorCode: described.errorCode, httpStatus: described.httpStatus, attemptsLeft: ctx.attempts - attempt, uncertain }, 'transient failure, will retry');
        // BullMQ keeps the message and the stack (which repeats the message), never the cause,
        // which stays in memory for the backoff strategy (a 429's Retry-After).
        throw new Error(errorMessage, { cause: err });
      }
      const outcome = decision.action === 'record' ? decision.outcome : decision.exhausted;
      const final = { outcome, ...described, errorMessage };
      if (uncertain && outcome !== 'rejected' && outcome !== 'forbidden') {
        // No tries left, and the last may have made a docflow: the feed says which before the row ends.
        log().info({ errorCode: described.errorCode }, 'no tries left; the last may have reached the gateway: asking the news feed before the row ends');
        return delay(1000, { exhausted: { ...final, outcome: outcome === 'unavailable' ? 'unavailable' : 'failed' } });
      }
      return end(final, { ledger: ledger() });
    };

    let found: string | undefined;
    if (!cadastralNumber && !exhausted) {
      // A job's first run asks suggest straight away, and the claim writes its checkpoint:
      // nearly every such row has no outcome, no checkpoint and a deal no ledger knows, so
      // the lookup would find nothing. Every later run (a retry, a stall, a hold, a wait,
      // a throttled run) looks first: a checkpoint or a docflow spares the suggest call.
      const first = !ctx.throttle && job.attemptsMade === 0 && !job.stalledCounter && !job.data.holds && !job.data.waits;
      try {
        if (!first) {
          const look = await ctx.ledger.lookup(bank, dealId, batch, row);
          if (look.earlier && look.earlier.dealId === dealId && SUBMITTED_OUTCOMES.has(look.earlier.outcome)) {
            await forget();
            return look.earlier;
          }
          const e = look.entry;
          if (e?.state === 'submitted' && e.docflowId && e.outcome) {
            const made = { docflowId: e.docflowId, outcome: e.outcome, batch: e.batch, row: e.row, at: e.at ?? '' };
            if ((e.batch === batch && e.row === row) || e.batch === '') return end(ownDocflow(row, dealId, made, e.via ?? 'answer', attempt), { ledger: ledger({ requestId: e.requestId, via: e.via ?? 'answer' }) });
            if (!resubmit) return end(alreadySubmitted(row, dealId, made, attempt), {});
          }
          cadastralNumber = look.cadastralNumber;
        }
        if (!cadastralNumber) {
          await ctx.throttle?.();
          const resolution = await resolveCadastralNumber(deal, ctx.client);
          if (resolution.kind !== 'found') {
            return end({ outcome: resolution.kind, errorCode: resolution.kind.toUpperCase(), errorMessage: resolution.message, candidates: resolution.cadastralNumbers }, { ledger: ledger() });
          }
          cadastralNumber = found = resolution.cadastralNumber;
        }
      } catch (err) {
        return fail(err, false);
      }
    }

    // Built while nothing is claimed yet; the ledger gives it its requestId.
    const request = exhausted ? undefined : buildEncumbranceRequest(deal, cadastralNumber!, profile, ctx.apiUrl);
    const nonce = randomUUID();
    let claimedAt = 0;
    let verdict: ClaimVerdict;
    try {
      // Throttled before the claim: a job put back by --rate leaves no try written ahead, and
      // keeps what suggest just found (the claim would have checkpointed it).
      if (!exhausted) {
        await ctx.throttle?.().catch(async (err: unknown) => {
          if (found && err instanceof RateLimitError) await ctx.ledger.checkpoint(batch, row, found);
          throw err;
        });
      }
      const claim = () => {
        claimedAt = performance.now();
        return ctx.ledger.claim({ bank, dealId, batch, row, job: `${job.queueQualifiedName}:${job.id}`, resubmit, mode: exhausted ? 'check' : 'send', nonce, ...(found && { cadastralNumber: found }) });
      };
      verdict = await claim();
      if (verdict.kind === 'nofeed') {
        // A refusal of the feed is no answer about this deal: never its outcome (rejected, forbidden).
        await ctx.ensureFeed().catch((err: unknown) => {
          throw err instanceof ApiHttpError && err.status === 401 ? err : new Error(`the gateway's news feed could not be started (${err instanceof Error ? err.message : String(err)}); nothing was sent`, { cause: err });
        });
        verdict = await claim();
      }
    } catch (err) {
      return fail(err, false);
    }

    switch (verdict.kind) {
      case 'done':
        await forget();
        return verdict.record;
      case 'own':
        return end(ownDocflow(row, dealId, verdict, verdict.via, attempt), { ledger: ledger({ via: verdict.via }) });
      case 'elsewhere':
        return end(alreadySubmitted(row, dealId, verdict.deal, attempt), {});
      case 'wait': {
        const waits = job.data.waits ?? 0;
        if (waits === 0) log().info({ holderBatch: verdict.batch, holderRow: verdict.row }, 'another row holds this deal; waiting for its outcome');
        return delay(claimRecheckMs(waits), { waits: waits + 1 });
      }
      case 'reconcile': {
        const late = verdict.now - verdict.due;
        // Counted as a wait: the next run looks up its checkpoint instead of asking suggest again.
        const waited = { waits: (job.data.waits ?? 0) + 1 };
        if (verdict.resolvable && late < 0) return delay(-late + 250, waited);
        if (verdict.resolvable && late < ctx.reconcileTimeoutMs) return delay(Math.min(30_000, 1000 + late / 4), waited);
        const why = verdict.resolvable
          ? `the news feed did not pass it within ${Math.round(ctx.reconcileTimeoutMs / 60_000)} min (is a worker following the feed?)`
          : 'the news feed was started after it, so it cannot tell';
        log().error({ due: new Date(verdict.due).toISOString() }, `a try of this deal may have created a docflow and ${why}: the row ends ERR_UNCERTAIN`);
        return end(
          {
            outcome: 'failed',
            errorCode: 'ERR_UNCERTAIN',
            errorMessage: `a try may have created a docflow (its answer never came) and ${why}; check the gateway before sending it again by hand: realty-batch retry ${batch} --outcome failed looks for it in the feed first`,
            ...(exhausted?.httpStatus !== undefined && { httpStatus: exhausted.httpStatus }),
          },
          { ledger: ledger({ keepClaim: true }) },
        );
      }
      case 'notfound':
        // The last try made nothing after all: the row ends with its failure.
        return end(exhausted ?? { outcome: 'failed', errorCode: 'ERR_INTERNAL', errorMessage: 'the ledger found no try to check' }, { ledger: ledger() });
      case 'nofeed':
        return fail(new Error('the news feed has no cursor in Redis'), false);
      case 'send':
        break;
    }

    request!.requestId = verdict.requestId;
    const settle = (how: 'definite' | 'uncertain') =>
      // Should this write fail, the try stays "sending" without an end: it is then reconciled
      // as one that lasted the whole timeout, which errs on the safe side.
      ctx.ledger.settle(bank, dealId, verdict.requestId, batch, row, nonce, how).catch((e: unknown) => log().warn({ err: { message: String(e) } }, 'could not note the try in the ledger'));
    // The try is reconciled as one that ended `timeoutMs` after its claim at the latest: the
    // call gets what is left of that, and none at all when the claim's answer came too late.
    const left = ctx.timeoutMs - (performance.now() - claimedAt);
    if (left < ctx.timeoutMs / 2) {
      await settle('definite');
      log().warn({ claimMs: Math.round(ctx.timeoutMs - left) }, "the ledger's answer came too late to send within the timeout; trying again");
      return delay(100);
    }
    let created: Awaited<ReturnType<RealtyClient['createDocflow']>>;
    try {
      created = await ctx.client.createDocflow(DOCFLOW_TYPE, request!, { timeoutMs: left });
    } catch (err) {
      const uncertain = mayHaveCreated(err);
      await settle(uncertain ? 'uncertain' : 'definite');
      return fail(err, uncertain);
    }
    return end({ outcome: created.status === 200 ? 'queued' : 'suspended', docflowId: created.docflow.docflowId, httpStatus: created.status }, { ledger: ledger({ requestId: verdict.requestId, via: 'answer' }) });
  };

  // The boundary with BullMQ: what a run throws becomes the job's failedReason, its stacktrace
  // and the queue's failed event. The run masks the gateway's text itself; this masks anything
  // else (a defect's message, a library's) before BullMQ stores it.
  return async (job: Job<DealJobData, OutcomeRecord>, token?: string) => {
    const deal = job.data.deal;
    try {
      return await run(job, token);
    } catch (err) {
      throw maskThrown(err, deal, profiles.get(job.data.batch)?.profile);
    }
  };
}
