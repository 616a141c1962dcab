/**
 * One follow-up sent at most once: claimed in the ledger (followup-ledger.ts), created, settled.
 * Nothing here sends a follow-up the ledger has, or one whose earlier answer was lost and the
 * feed cannot yet tell about.
 */
import type { Database } from '../db/database.js';
import { ApiHttpError } from '../errors.js';
import { maskRegistryText } from '../feed/item-status.js';
import type { RealtyClient } from '../realty/client.js';
import type { DocflowRequest } from '../domain/gateway.js';
import { claimFollowUp, readFollowUp, settleFollowUp, type ClaimOptions, type FollowUpKey } from './followup-ledger.js';

export type FollowUpResult =
  /** Made now: its docflow and the state the gateway answered. */
  | { kind: 'sent'; docflowId: string; state: string }
  /** Made before (by an earlier invocation, or found in the feed): nothing sent. */
  | { kind: 'before'; docflowId: string; at: string }
  /** Not sent: one sentence why (a refusal, a lost answer, a feed that cannot tell yet). */
  | { kind: 'refused' | 'waiting' | 'lost'; reason: string };

export interface SendContext {
  db: Database;
  client: RealtyClient;
  timeoutMs: number;
  feedLagMs: number;
  /** How long a claim waits for the feed to be known complete (a follower catching up). */
  feedWaitMs: number;
}

/**
 * Before any upload or look at the parent: what the ledger already holds of the follow-up, as a
 * result; undefined when it may be sent. A try whose answer was lost is waited for first (at most
 * `feedWaitMs`, while the follower reads the news feed): the feed says whether it made its
 * docflow, and the parent's state after it (a cancelled docflow ends in error) must not hide it.
 */
export async function earlierFollowUp(ctx: Pick<SendContext, 'db' | 'feedWaitMs'>, key: FollowUpKey): Promise<FollowUpResult | undefined> {
  const until = Date.now() + ctx.feedWaitMs;
  let e = await readFollowUp(ctx.db, key);
  while (e?.state === 'sending' && e.ended && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    e = await readFollowUp(ctx.db, key);
  }
  if (e?.state === 'submitted') return { kind: 'before', docflowId: e.docflowId, at: e.at };
  if (e?.state === 'sending' && e.ended)
    return {
      kind: 'lost',
      reason: `the answer to its try of ${e.since} was lost and the news feed has not shown yet whether it was made: nothing sent (run again once a follower has read it)`,
    };
  return undefined;
}

/** A 4xx (but a time-out or a rate limit) or a 501: the gateway made nothing. */
const refusedForSure = (err: unknown): err is ApiHttpError =>
  err instanceof ApiHttpError &&
  ((err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429) || err.status === 501);

export async function sendFollowUp(
  ctx: SendContext,
  key: FollowUpKey,
  where: Pick<ClaimOptions, 'batch' | 'row'>,
  options: object,
): Promise<FollowUpResult> {
  const until = Date.now() + ctx.feedWaitMs;
  let claim = await claimFollowUp(ctx.db, key, { ...where, timeoutMs: ctx.timeoutMs, feedLagMs: ctx.feedLagMs });
  while ((claim.kind === 'behind' || claim.kind === 'nofeed') && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    claim = await claimFollowUp(ctx.db, key, { ...where, timeoutMs: ctx.timeoutMs, feedLagMs: ctx.feedLagMs });
  }
  switch (claim.kind) {
    case 'done':
      return { kind: 'before', docflowId: claim.docflowId, at: claim.at };
    case 'in-flight':
      return { kind: 'waiting', reason: `another invocation is sending it since ${claim.since}: nothing sent` };
    case 'uncertain':
      return {
        kind: 'lost',
        reason: claim.resolvable
          ? `the answer to its try of ${claim.since} was lost and the news feed has not been read past ${claim.due} yet: nothing sent (run again once a follower has read it; it gives the docflow if one was made)`
          : `the answer to its try of ${claim.since} was lost before the news feed's cursor, so the feed cannot tell: nothing sent; check the gateway, then answer for it with realty-batch ledger ${key.dealId} --resolve`,
      };
    case 'behind':
      return {
        kind: 'waiting',
        reason: `the news feed is not known complete (last read to its end at ${claim.coveredAt}): nothing sent; run again with a follower running (realty-batch track)`,
      };
    case 'nofeed':
      return { kind: 'waiting', reason: 'the news feed has no cursor yet: nothing sent' };
    case 'send':
      break;
  }
  const body: DocflowRequest<object> = { requestId: claim.requestId, options };
  try {
    const { docflow } = await ctx.client.createDocflow(key.type, body, { timeoutMs: ctx.timeoutMs });
    const outcome = docflow.state === 'suspended' ? 'suspended' : 'queued';
    await settleFollowUp(ctx.db, key, claim.nonce, { kind: 'made', docflowId: docflow.docflowId, outcome, at: new Date().toISOString() });
    return { kind: 'sent', docflowId: docflow.docflowId, state: docflow.state };
  } catch (err) {
    // The gateway's text may echo a person: masked as a results file's would be.
    const said = maskRegistryText((err as Error).message);
    if (refusedForSure(err)) {
      await settleFollowUp(ctx.db, key, claim.nonce, { kind: 'refused' });
      return { kind: 'refused', reason: `the gateway refused it: ${said}` };
    }
    await settleFollowUp(ctx.db, key, claim.nonce, { kind: 'uncertain' });
    return {
      kind: 'lost',
      reason: `its answer was lost (${said}): nothing is sent again until the news feed shows whether it was made (run again later)`,
    };
  }
}
