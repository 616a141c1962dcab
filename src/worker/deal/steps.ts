/**
 * The steps of a deal job, each a plain function of the run that returns a Decision, or
 * nothing when the next step goes on: the batch's readiness, a job whose deal was removed,
 * the resolution of the cadastral number, the claim in the ledger and the docflow call.
 * They call the gateway and the stores through the context; what a decision becomes at
 * BullMQ's boundary (a delay, a wait, a failure) is jobs/deal.ts's.
 */
import { randomUUID } from 'node:crypto';
import { RateLimitError } from 'bullmq';
import { TUNABLES } from '../../config.js';
import { ApiHttpError, LoginRefusedError } from '../../errors.js';
import type { ClaimVerdict, Lookup } from '../../ledger/ledger.js';
import { compareProperties, storedProperty, type PropertyKey } from '../../input/property-key.js';
import { dealIdConflict } from '../../outcomes/deal-conflict.js';
import { ERROR_CODES, failsJob } from '../../outcomes/error-codes.js';
import { alreadySubmitted, ownDocflow, SUBMITTED_OUTCOMES, type SubmittedDeal } from '../../domain/outcome.js';
import type { DocflowRequest } from '../../domain/gateway.js';
import type { BankProfile } from '../../input/profile.js';
import { namesFiles, withUploaded } from '../../docflows/registry.js';
import type { BatchCache } from '../batch-cache.js';
import { mayHaveCreated } from './gateway-failure.js';
import type { DealRun, Final } from './run.js';
import { resolveCadastralNumber } from './resolve-cadastral.js';
import { attorneyFile, uploadDocuments } from '../upload-documents.js';
import type { Decision } from './decision.js';
import { failure } from './failure.js';

export type { Decision };

/** The steps in their order; the first decision ends the run. */
export async function decideDeal(run: DealRun, batches: BatchCache): Promise<Decision> {
  // A loaded batch and a fresh profile are known without a read (nearly every job): no promise
  // is made for them, nor for a throttle or an upload a run does not have (about 0.5 µs each).
  if (!batches.readyNow(run.batch)) {
    const held = await readiness(run, batches);
    if (held) return held;
  }
  if (!run.deal) return dataRemoved(run);
  const profile = batches.freshProfile(run.batch);
  if (profile) useProfile(run, profile);
  else await readProfile(run, batches);
  const resolved = await resolution(run);
  if (resolved) return resolved;
  const uploaded = namesFiles(run.deal) || attorneyFile(run) ? await uploadDocuments(run) : undefined;
  // An upload made no docflow: its failure is never uncertain.
  if (uploaded) return uploaded.kind === 'delay' ? uploaded : failure(run, uploaded.error, false);
  const request = docflowRequest(run);
  const claimed = await claim(run);
  return claimed.kind === 'send' ? send(run, claimed, request!) : claimed;
}

const DROP: Decision = { kind: 'drop' };

/**
 * A job of a batch still loading looks again after 2 s, then 4, 8, ... at most
 * 5 minutes: a batch whose loader died waits, cheaply, to be loaded again.
 */
export function loadingRecheckMs(timesHeld: number): number {
  return Math.min(TUNABLES.loadingRecheckMaxMs, TUNABLES.loadingRecheckMs * 2 ** Math.min(8, Math.max(0, timesHeld - 1)));
}

/** A row whose deal another row holds looks again after 2 s, 4, 8, ... at most a minute. */
export function claimRecheckMs(waits: number): number {
  return Math.min(TUNABLES.claimRecheckMaxMs, TUNABLES.claimRecheckMs * 2 ** Math.min(5, waits)) * (0.9 + 0.2 * Math.random());
}

/** Nothing of a batch is sent before its whole file was read: a file broken half-way must not leave half a night submitted. */
export async function readiness(run: DealRun, batches: BatchCache): Promise<Decision | undefined> {
  const state = await batches.readiness(run.batch);
  if (state === 'loading') return { kind: 'delay', ms: loadingRecheckMs(run.job.attemptsStarted) };
  if (typeof state === 'object') {
    // Its deals were checked against another ledger: this worker's would not know what that one
    // filed. The job stays for a worker on the batch's database.
    run
      .log()
      .error(
        { database: state.elsewhere },
        `batch ${run.batch} was loaded into database ${state.elsewhere}, not this worker's (DATABASE_URL): its jobs are left for a worker on that database`,
      );
    return { kind: 'delay', ms: TUNABLES.loadingRecheckMaxMs };
  }
  return state === 'failed' ? DROP : undefined;
}

/**
 * A finished job run again (a retry from the dashboard): its deal left Redis with its
 * outcome. The outcome stands, and the job ends as it did: completed with the row's record,
 * or failed again when that record is a failure of the machinery (failsJob), whose row
 * `realty-batch retry` sends again (it reads the deal from the input).
 */
export async function dataRemoved(run: DealRun): Promise<Decision> {
  const message = `this job's deal data was removed when the row got its outcome; run: realty-batch retry ${run.batch}`;
  const [earlier] = await run.ctx.outcomes.range(run.batch, run.row, run.row);
  if (earlier && !failsJob(earlier)) {
    run.log().info({ outcome: earlier.outcome }, 'run again after its row had its outcome: the outcome stands');
    return { kind: 'done', record: earlier };
  }
  if (earlier) {
    run.log().warn({ outcome: earlier.outcome }, message);
    return { kind: 'stop', message };
  }
  return {
    kind: 'outcome',
    fields: { outcome: 'failed', errorCode: ERROR_CODES.ERR_DATA_REMOVED.code, errorMessage: message },
    ledger: undefined,
  };
}

/** Reads the batch's profile (the bank the deal is claimed under); a batch without one fails the job. */
export async function readProfile(run: DealRun, batches: BatchCache): Promise<void> {
  useProfile(run, await batches.profile(run.batch));
}

function useProfile(run: DealRun, profile: BankProfile): void {
  run.profile = profile;
  run.bank = profile.organization.inn;
}

/**
 * The cadastral number, before the claim. A job's first run asks suggest straight away, and
 * the claim keeps what it found: nearly every such row has no outcome, no claim and a deal no
 * ledger knows, so the lookup would find nothing. Every later run (a retry, a stall, a hold, a
 * wait, a throttled run) looks first: its claim, a checkpoint or a docflow spares the suggest call.
 */
export async function resolution(run: DealRun): Promise<Decision | undefined> {
  if (run.cadastralNumber || run.exhausted) return undefined;
  const { ctx, job } = run;
  const first = !ctx.throttle && job.attemptsMade === 0 && !job.stalledCounter && !job.data.holds && !job.data.waits;
  try {
    if (!first) {
      const look = await ctx.ledger.lookup(run.bank, run.ledgerKey, run.batch, run.row, run.kind.type);
      // The checkpoint's number first: the lookup compares it with the one the deal's docflow was made for.
      run.cadastralNumber = look.cadastralNumber;
      const known = lookedUp(run, look);
      if (known) return known;
    }
    if (run.cadastralNumber) return undefined;
    if (ctx.throttle) await ctx.throttle();
    const resolved = await resolveCadastralNumber(run.deal!, ctx.client);
    if (resolved.kind === 'found') {
      run.cadastralNumber = run.found = resolved.cadastralNumber;
      return undefined;
    }
    const errorCode = resolved.kind === 'ambiguous' ? ERROR_CODES.AMBIGUOUS.code : ERROR_CODES.NOT_FOUND.code;
    return {
      kind: 'outcome',
      fields: { outcome: resolved.kind, errorCode, errorMessage: resolved.message, candidates: resolved.cadastralNumbers },
      ledger: run.ledger(),
    };
  } catch (err) {
    return failure(run, err, false);
  }
}

/** What the lookup tells before suggest: the row's outcome, or the deal's docflow. */
export function lookedUp(run: DealRun, look: Lookup): Decision | undefined {
  if (look.earlier && look.earlier.dealId === run.dealId && SUBMITTED_OUTCOMES.has(look.earlier.outcome))
    return { kind: 'done', record: look.earlier };
  const e = look.entry;
  if (e?.state !== 'submitted' || !e.docflowId || !e.outcome) return undefined;
  const made = {
    docflowId: e.docflowId,
    outcome: e.outcome,
    batch: e.batch,
    row: e.row,
    at: e.at ?? '',
    requestId: e.requestId,
    type: e.type,
  };
  const via = e.via ?? 'answer';
  // An entry that keeps no property (the feed's, or an import's without it) is taken for the same deal.
  const same = e.property ? compareProperties(e.property, storedProperty(run.property())) : 'same';
  // Another property: another deal under this dealId, on the row that made the docflow too (its
  // batch expired, and its id was loaded again with another file).
  if (same === 'different') return conflictOutcome(run, made, e.property!);
  if ((e.batch === run.batch && e.row === run.row) || e.batch === '')
    return {
      kind: 'outcome',
      fields: ownDocflow(run.row, run.dealId, made, via, run.attempt),
      ledger: run.ledger({ requestId: e.requestId, via }),
    };
  // Not told yet (no cadastral number of the row's): suggest finds it, and the claim tells.
  if (same === 'unknown') return undefined;
  return run.resubmit
    ? undefined
    : { kind: 'outcome', fields: alreadySubmitted(run.row, run.dealId, made, run.attempt), ledger: undefined };
}

/** The row's dealId is another property's in the ledger: refused, nothing sent, the ledger's entry left as it is. */
function conflictOutcome(run: DealRun, deal: SubmittedDeal, registered: PropertyKey): Decision {
  const property = run.property();
  run.log().warn({ holderBatch: deal.batch, holderRow: deal.row }, 'the ledger has this dealId for another property: the row is refused');
  return { kind: 'outcome', fields: dealIdConflict(run.row, run.dealId, deal, registered, property, run.attempt), ledger: undefined };
}

/** A try the ledger let go: its requestId, this run's claim and when it was made (performance.now()). */
export interface Claimed {
  kind: 'send';
  requestId: string;
  nonce: string;
  claimedAt: number;
}

/**
 * Claims the deal in the ledger (a try written ahead, or with no tries left a check of the
 * last), starting the news feed first if the deployment has none. Throttled before the
 * claim: a job put back by --rate leaves no try written ahead, and keeps what suggest just
 * found (a claim would have kept it).
 */
export async function claim(run: DealRun): Promise<Decision | Claimed> {
  const { ctx, exhausted, found, batch, row } = run;
  const nonce = randomUUID();
  let claimedAt: number;
  let verdict: ClaimVerdict;
  try {
    if (!exhausted && ctx.throttle) {
      await ctx.throttle().catch(async (err: unknown) => {
        if (found && err instanceof RateLimitError) await ctx.ledger.checkpoint(batch, row, found);
        throw err;
      });
    }
    const request = {
      bank: run.bank,
      type: run.kind.type,
      dealId: run.ledgerKey,
      batch,
      row,
      job: run.jobKey,
      resubmit: run.resubmit,
      mode: exhausted ? 'check' : 'send',
      nonce,
      ...(found && { cadastralNumber: found }),
      property: run.property(),
      personFilter: run.personFilter(),
    } as const;
    claimedAt = performance.now();
    verdict = await ctx.ledger.claim(request);
    if (verdict.kind === 'nofeed') {
      // A refusal of the feed is no answer about this deal: never its outcome (rejected, forbidden).
      await ctx.ensureFeed().catch((err: unknown) => {
        throw (err instanceof ApiHttpError && err.status === 401) || err instanceof LoginRefusedError
          ? err
          : new Error(
              `the gateway's news feed could not be started (${err instanceof Error ? err.message : String(err)}); nothing was sent`,
              { cause: err },
            );
      });
      claimedAt = performance.now();
      verdict = await ctx.ledger.claim(request);
    }
  } catch (err) {
    return failure(run, err, false);
  }
  return verdict.kind === 'send' ? { kind: 'send', requestId: verdict.requestId, nonce, claimedAt } : judged(run, verdict);
}

/** What a claim's verdict other than `send` means for the row. */
export function judged(run: DealRun, verdict: Exclude<ClaimVerdict, { kind: 'send' }>): Decision {
  switch (verdict.kind) {
    case 'done':
      return { kind: 'done', record: verdict.record };
    case 'own':
      return {
        kind: 'outcome',
        fields: ownDocflow(run.row, run.dealId, verdict, verdict.via, run.attempt),
        ledger: run.ledger({ via: verdict.via }),
      };
    case 'elsewhere':
      return {
        kind: 'outcome',
        fields: alreadySubmitted(run.row, run.dealId, verdict.deal, run.attempt, verdict.stands),
        ledger: undefined,
      };
    case 'conflict':
      return conflictOutcome(run, verdict.deal, verdict.property);
    case 'wait': {
      const waits = run.job.data.waits ?? 0;
      if (waits === 0)
        run.log().info({ holderBatch: verdict.batch, holderRow: verdict.row }, 'another row holds this deal; waiting for its outcome');
      return { kind: 'delay', ms: claimRecheckMs(waits), patch: { waits: waits + 1 } };
    }
    case 'reconcile':
      return reconcile(run, verdict);
    case 'notfound':
      // The last try made nothing after all: the row ends with its failure.
      return {
        kind: 'outcome',
        fields: run.exhausted ?? {
          outcome: 'failed',
          errorCode: ERROR_CODES.ERR_INTERNAL.code,
          errorMessage: 'the ledger found no try to check',
        },
        ledger: run.ledger(),
      };
    case 'nofeed':
      return failure(run, new Error('the news feed has no cursor in Redis'), false);
  }
}

/** A try of the deal may have made a docflow: wait for the news feed to pass it, for a while; then the row ends ERR_UNCERTAIN. */
function reconcile(run: DealRun, verdict: Extract<ClaimVerdict, { kind: 'reconcile' }>): Decision {
  const { reconcileTimeoutMs } = run.ctx;
  const late = verdict.now - verdict.due;
  // Counted as a wait: the next run looks up its checkpoint instead of asking suggest again.
  const waited = { waits: (run.job.data.waits ?? 0) + 1 };
  if (verdict.resolvable && late < 0) return { kind: 'delay', ms: -late + 250, patch: waited };
  if (verdict.resolvable && late < reconcileTimeoutMs) return { kind: 'delay', ms: Math.min(30_000, 1000 + late / 4), patch: waited };
  const why = verdict.resolvable
    ? `the news feed did not pass it within ${Math.round(reconcileTimeoutMs / 60_000)} min (is a worker following the feed?)`
    : 'the news feed was started after it, so it cannot tell';
  run
    .log()
    .error(
      { due: new Date(verdict.due).toISOString() },
      `a try of this deal may have created a docflow and ${why}: the row ends ERR_UNCERTAIN`,
    );
  const httpStatus = run.exhausted?.httpStatus;
  const fields: Final = {
    outcome: 'failed',
    errorCode: ERROR_CODES.ERR_UNCERTAIN.code,
    errorMessage: `a try may have created a docflow (its answer never came) and ${why}; check the gateway before sending it again by hand: realty-batch retry ${run.batch} --outcome failed looks for it in the feed first`,
    ...(httpStatus !== undefined && { httpStatus }),
  };
  return { kind: 'outcome', fields, ledger: run.ledger({ keepClaim: true }) };
}

/** The request for the docflow, built while nothing is claimed yet; the claim gives it its requestId. */
export function docflowRequest(run: DealRun): DocflowRequest<object> | undefined {
  if (run.exhausted) return undefined;
  const deal = run.uploaded ? withUploaded(run.deal!, run.uploaded) : run.deal!;
  const profile = run.profile!;
  const attorney = run.uploadedAttorney && { ...profile.representative.attorney!, ...run.uploadedAttorney };
  const sent = attorney ? { ...profile, representative: { ...profile.representative, attorney } } : profile;
  return run.kind.buildRequest(deal, run.cadastralNumber!, sent, run.ctx.apiUrl);
}

/** The docflow call, within what is left of the timeout its claim counted on, and the try's end noted in the ledger. */
export async function send(run: DealRun, claimed: Claimed, request: DocflowRequest<object>): Promise<Decision> {
  const { ctx } = run;
  request.requestId = claimed.requestId;
  // The try is reconciled as one that ended `timeoutMs` after its claim at the latest: the
  // call gets what is left of that, and none at all when the claim's answer came too late.
  const left = ctx.timeoutMs - (performance.now() - claimed.claimedAt);
  if (left < ctx.timeoutMs / 2) {
    await settle(run, claimed, 'definite');
    run
      .log()
      .warn({ claimMs: Math.round(ctx.timeoutMs - left) }, "the ledger's answer came too late to send within the timeout; trying again");
    return { kind: 'delay', ms: 100 };
  }
  let created: Awaited<ReturnType<typeof ctx.client.createDocflow>>;
  try {
    created = await ctx.client.createDocflow(run.kind.type, request, { timeoutMs: left });
  } catch (err) {
    const uncertain = mayHaveCreated(err);
    await settle(run, claimed, uncertain ? 'uncertain' : 'definite');
    return failure(run, err, uncertain);
  }
  return {
    kind: 'outcome',
    fields: {
      outcome: created.status === 200 ? 'queued' : 'suspended',
      docflowId: created.docflow.docflowId,
      httpStatus: created.status,
      requestId: claimed.requestId,
      type: run.kind.type,
    },
    ledger: run.ledger({ requestId: claimed.requestId, via: 'answer' }),
  };
}

/**
 * Notes the try's end in the ledger. Should this write fail, the try stays "sending" without
 * an end: it is then reconciled as one that lasted the whole timeout, which errs on the safe side.
 */
function settle(run: DealRun, claimed: Claimed, how: 'definite' | 'uncertain'): Promise<void> {
  return run.ctx.ledger
    .settle(run.bank, run.ledgerKey, claimed.requestId, run.batch, run.row, claimed.nonce, how)
    .catch((e: unknown) => run.log().warn({ err: { message: String(e) } }, 'could not note the try in the ledger'));
}
