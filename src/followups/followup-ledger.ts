/**
 * A follow-up of a batch's docflow (an additional packet, an action) in the ledger's table, one
 * operation per function: never twice per (bank, type, key), as a deal's docflow is never made
 * twice. The key is the parent docflow and what is asked of it: `<parent>:<action>` for an
 * action, `<parent>:<sha256 of the packet's files>` for a packet. Its requestId is the ledger's
 * (`<bank>:act:0:<key>`, `<bank>:pkt:0:<key>`), so the news feed's follower finds an answer that
 * was lost (src/feed/feed-page.ts gives the entry its docflow) and follows its state.
 *
 * A try is written ahead ("sending", on the database's clock) and committed before the call goes
 * out. An answer lost leaves it so: it is not sent again until the feed has been read past the
 * try's end plus the feed's lag without showing it, as for a deal (src/ledger/claim.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Database, Trx } from '../db/database.js';
import type { LedgerRow } from '../db/schema.js';
import { FEED_SLACK_MS } from '../ledger/claim.js';
import { lagAllowance } from '../ledger/feed-lag.js';
import { deleteRow, insertRow, lockRow, submitRow, updateRow, type LedgerKey } from '../ledger/rows.js';
import { requestIdOf } from '../docflows/registry.js';

export type FollowUpType = 'additional_packet_request' | 'action_request';
export type ActionType = 'cancel' | 'suspend' | 'resume';

export interface FollowUpKey extends LedgerKey {
  type: FollowUpType;
}

export const actionKey = (bank: string, parent: string, action: ActionType): FollowUpKey => ({
  bank,
  type: 'action_request',
  dealId: `${parent}:${action}`,
});

export const packetKey = (bank: string, parent: string, filesSha256: string): FollowUpKey => ({
  bank,
  type: 'additional_packet_request',
  dealId: `${parent}:${filesSha256}`,
});

/** A follow-up's one requestId: try 0 of its key, always. */
export const followUpRequestId = (key: FollowUpKey): string => requestIdOf(key.bank, key.dealId, 0, key.type);

/** What the ledger holds of a follow-up. */
export type FollowUpEntry =
  | { state: 'submitted'; docflowId: string; at: string; via: string }
  /** A try whose answer has not come: when it began (ISO), and whether it has ended (its answer lost). */
  | { state: 'sending'; since: string; ended: boolean };

export type FollowUpClaim =
  /** Written ahead and committed: send with this requestId, and settle with this nonce. */
  | { kind: 'send'; requestId: string; nonce: string }
  | { kind: 'done'; docflowId: string; at: string; via: string }
  /** Another invocation's call is under way (it began less than its time-out ago). */
  | { kind: 'in-flight'; since: string }
  /** An answer was lost at `since`: the feed has not been read past `due` yet (`resolvable` false: it never can be). */
  | { kind: 'uncertain'; since: string; due: string; resolvable: boolean }
  /** The feed is not known complete recently enough to trust the ledger (a database restored from an older copy). */
  | { kind: 'behind'; coveredAt: string }
  /** The feed has no cursor yet. */
  | { kind: 'nofeed' };

export interface ClaimOptions {
  /** The row of the batch whose docflow the follow-up is for (kept in the entry, for its history). */
  batch: string;
  row: number;
  /** The call's time-out: a try that began longer ago and did not end is over. */
  timeoutMs: number;
  /** How long after a try's end its docflow may take to show in the feed (`--feed-lag-ms`). */
  feedLagMs: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export async function readFollowUp(db: Database, key: FollowUpKey): Promise<FollowUpEntry | undefined> {
  const row = await db.kysely
    .selectFrom('ledger')
    .selectAll()
    .where('bank', '=', key.bank)
    .where('type', '=', key.type)
    .where('deal_id', '=', key.dealId)
    .executeTakeFirst();
  return row && entryOf(row);
}

function entryOf(row: LedgerRow): FollowUpEntry | undefined {
  if (row.state === 'submitted' && row.docflow_id)
    return { state: 'submitted', docflowId: row.docflow_id, at: row.at ?? '', via: row.via ?? 'answer' };
  if (row.state === 'sending') return { state: 'sending', since: iso(Number(row.try_at ?? 0)), ended: row.end_at !== null };
  return undefined;
}

type FeedRow = { since: number; covered_at: number; poll_ms: number; lag_p99_ms: number };

/**
 * A try whose answer has not come: still under way, or lost and not yet passed by the feed;
 * undefined once the feed passed its end plus the lag without its requestId (it made nothing).
 */
function pendingTry(e: LedgerRow, now: number, feed: FeedRow, feedLagMs: number): FollowUpClaim | undefined {
  const tryAt = Number(e.try_at ?? 0);
  if (e.end_at === null && now < tryAt + (e.timeout_ms ?? 0)) return { kind: 'in-flight', since: iso(tryAt) };
  const lag = lagAllowance(Math.max(e.lag_ms ?? 0, feedLagMs), Number(feed.lag_p99_ms));
  const due = (e.end_at !== null ? Number(e.end_at) : tryAt + (e.timeout_ms ?? 0)) + lag;
  if (tryAt < Number(feed.since)) return { kind: 'uncertain', since: iso(tryAt), due: iso(due), resolvable: false };
  if (Number(feed.covered_at) < due) return { kind: 'uncertain', since: iso(tryAt), due: iso(due), resolvable: true };
  return undefined;
}

/** Claims the follow-up for one call, in one transaction committed before the call goes out. */
export async function claimFollowUp(db: Database, key: FollowUpKey, options: ClaimOptions): Promise<FollowUpClaim> {
  return db.transaction(async (trx) => {
    const now = await db.now(trx);
    const feed = await trx
      .selectFrom('feed')
      .select(['since', 'covered_at', 'poll_ms', 'lag_p99_ms'])
      .where('id', '=', 1)
      .executeTakeFirst();
    if (!feed) return { kind: 'nofeed' } as const;
    for (;;) {
      const e = await lockRow(trx, db.engine, key);
      if (e?.state === 'submitted' && e.docflow_id)
        return { kind: 'done', docflowId: e.docflow_id, at: e.at ?? '', via: e.via ?? 'answer' };
      const pending = e?.state === 'sending' ? pendingTry(e, now, feed, options.feedLagMs) : undefined;
      if (pending) return pending;
      // Like a deal's claim: a database restored from an older copy forgets follow-ups the feed gives back.
      if (now - Number(feed.covered_at) > 2 * Number(feed.poll_ms) + FEED_SLACK_MS)
        return { kind: 'behind', coveredAt: iso(Number(feed.covered_at)) };
      const nonce = randomUUID();
      if (!(await writeTry(trx, key, e, now, nonce, options))) continue;
      return { kind: 'send', requestId: followUpRequestId(key), nonce };
    }
  });
}

/** The try written ahead; false when another transaction made the key's row first (decide again). */
async function writeTry(
  trx: Trx,
  key: FollowUpKey,
  e: LedgerRow | undefined,
  now: number,
  nonce: string,
  o: ClaimOptions,
): Promise<boolean> {
  const row = {
    n: 0,
    state: 'sending',
    batch: o.batch,
    row: o.row,
    // No job: nothing in Redis runs it, and the feed's follower has no row to wake for it.
    job: null,
    try_at: now,
    end_at: null,
    timeout_ms: o.timeoutMs,
    lag_ms: o.feedLagMs,
    nonce,
    docflow_id: null,
    outcome: null,
    at: null,
    via: null,
    cn: null,
    addr: null,
    pf: null,
    prev: null,
    answered_at: null,
    updated_at: now,
  };
  if (e) {
    await updateRow(trx, key, row);
    return true;
  }
  return insertRow(trx, { bank: key.bank, type: key.type, deal_id: key.dealId, ...row });
}

export type FollowUpSettlement =
  /** The gateway made its docflow. */
  | { kind: 'made'; docflowId: string; outcome: 'queued' | 'suspended'; at: string }
  /** The gateway said no (a 4xx, a 501): nothing was made, the key is free again. */
  | { kind: 'refused' }
  /** No answer, or one that cannot be trusted: the try stays, ended now, for the feed to tell. */
  | { kind: 'uncertain' };

/** Settles the claim `nonce` made; nothing when the entry moved on (the feed found its docflow first). */
export async function settleFollowUp(db: Database, key: FollowUpKey, nonce: string, how: FollowUpSettlement): Promise<void> {
  await db.transaction(async (trx) => {
    const now = await db.now(trx);
    const e = await lockRow(trx, db.engine, key);
    if (!e || e.state !== 'sending' || e.nonce !== nonce) return;
    if (how.kind === 'made') await submitRow(trx, key, { docflowId: how.docflowId, outcome: how.outcome, at: how.at, via: 'answer' }, now);
    else if (how.kind === 'refused') await deleteRow(trx, key);
    else await updateRow(trx, key, { end_at: now, updated_at: now });
  });
}
