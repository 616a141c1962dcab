/**
 * The ledger's claim: the one place that decides whether a row may ask the gateway for a
 * docflow. The decision is one transaction on the deal's row in the database (its row locked,
 * the feed's row read); it is committed before the creation call goes out. Redis is read
 * around it for the work only: the row's own outcome (its job ran again), the checkpoint of
 * the cadastral number suggest found for a row that must wait, and whether another row that holds the claim still
 * runs, which chooses between waiting and taking over, never whether a deal may be sent.
 */
import { FeedNotCompleteError } from '../errors.js';
import { lagAllowance } from './feed-lag.js';
import { runCompiled } from '../db/compiled.js';
import type { Engine, Trx } from '../db/database.js';
import type { LedgerRow } from '../db/schema.js';
import { storedProperty } from '../input/property-key.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { propertyOf, requestIdOf, type DocflowType, type PropertyKey, type SubmittedDeal, type Via } from './entry.js';
import {
  dealOf,
  insertRow,
  lockRow,
  NO_TRY,
  otherProperty,
  prevOf,
  releaseRow,
  updateRow,
  type LedgerKey,
  type PrevDocflow,
} from './rows.js';

/** What a row may do about its deal now. */
export type ClaimVerdict =
  /** The row has its outcome already (its job ran again). */
  | { kind: 'done'; record: OutcomeRecord }
  /** The feed has no cursor yet: start it (`ensureFeed`), then claim again. */
  | { kind: 'nofeed' }
  /** This row made the deal's docflow before (its answer, or the feed, said so). */
  | { kind: 'own'; docflowId: string; outcome: 'queued' | 'suspended'; at: string; via: Via; requestId?: string; type?: string }
  /**
   * Another row or batch made it: nothing is sent. `stands`: the row asked to resubmit, and the
   * deal's docflow was not refused by the registry (its state as the feed last showed it, '' for
   * none yet): a deal is sent again only once the registry refused it.
   */
  | { kind: 'elsewhere'; deal: SubmittedDeal; stands?: string }
  /**
   * Another row made the deal's docflow for another property (another cadastral number):
   * the dealId is another deal's, nothing is sent, --resubmit or not.
   */
  | { kind: 'conflict'; deal: SubmittedDeal; property: PropertyKey }
  /** Another row holds the deal and is still alive: look again later. */
  | { kind: 'wait'; batch: string; row: number }
  /**
   * A try of the deal may have reached the gateway: wait until the feed has passed
   * `due` (ms of the database's clock, `now` is its time now). `resolvable` is false when the
   * try is older than the feed's cursor: the feed can never tell.
   */
  | { kind: 'reconcile'; due: number; now: number; resolvable: boolean }
  /** (mode `check`) the feed passed the try and did not show it: it made nothing. */
  | { kind: 'notfound' }
  /** Go: the try is written ahead and committed; send with this requestId. */
  | { kind: 'send'; requestId: string };

export interface ClaimInput {
  key: LedgerKey;
  batch: string;
  row: number;
  job: string;
  resubmit: boolean;
  mode: 'send' | 'check';
  /** The row's property as the ledger keeps it ('' for what it has not: propertyArgs). */
  cn: string;
  addr: string;
  nonce: string;
  personFilter: string;
  timeoutMs: number;
  feedLagMs: number;
}

/**
 * The holder's liveness, as Redis told it just before: `undefined` until asked. The decision
 * asks (`alive` verdict) only when another row holds the deal and has no docflow yet.
 */
export interface Holder {
  job: string;
  batch: string;
  row: number;
  alive: boolean;
}

/** The decision needs to know whether this holder still runs: ask Redis, then decide again. */
export type NeedsHolder = { kind: 'holder'; job: string; batch: string; row: number };

/**
 * Nothing may be sent now: the feed was last read complete `now - coveredAt` ms ago (database
 * clock), more than `allowMs` (two of its follower's poll intervals). A database restored from
 * an older copy does not know the docflows made after that copy: they are learned from the feed
 * before anything is sent (src/ledger/restore.ts). Nothing was written.
 */
export type FeedBehind = { kind: 'behind'; coveredAt: number; now: number; allowMs: number };

/**
 * Beyond two of the follower's periods (its pause plus its read's time, as the feed's row keeps
 * it), what a busy host's event loop and the page's own commit may add before the next read is
 * stored: a run whose follower keeps reading never waits for it. Small beside any backup's age.
 */
export const FEED_SLACK_MS = 250;

export { FeedNotCompleteError };

/** ledger.claim's FeedBehind, as the error it throws: the row waits without spending a try (src/worker/deal/failure.ts). */
export function feedNotComplete(behind: FeedBehind): FeedNotCompleteError {
  return new FeedNotCompleteError(
    `the news feed is not known complete: its last complete read was ${describeAge(behind.now - behind.coveredAt)} ago (a claim needs one within ${describeAge(behind.allowMs)}, two poll intervals); nothing was sent`,
    behind,
  );
}

/** An age for people: ms under 10 s, else seconds, minutes, hours. */
export function describeAge(ms: number): string {
  if (ms < 10_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

/** A row's property as the ledger keeps it (storedProperty); '' for what it has not. */
export function propertyArgs(property: PropertyKey | undefined): [string, string] {
  const stored = property && storedProperty(property);
  return [stored?.cadastralNumber ?? '', stored?.address ?? ''];
}

const elsewhere = (x: Parameters<typeof dealOf>[0]): ClaimVerdict => ({ kind: 'elsewhere', deal: dealOf(x) });
const conflict = (x: Parameters<typeof dealOf>[0] & { cn?: string | null; addr?: string | null }): ClaimVerdict => ({
  kind: 'conflict',
  deal: dealOf(x),
  property: propertyOf(x.cn, x.addr) ?? {},
});

/** The claim's decision, in the caller's transaction. */
export async function decideClaim(
  trx: Trx,
  engine: Engine,
  now: number,
  c: ClaimInput,
  holder: Holder | undefined,
): Promise<ClaimVerdict | NeedsHolder | FeedBehind> {
  const known = await feedOf(trx);
  if (!known) return { kind: 'nofeed' };
  // A deal the ledger does not know (nearly every claim) gets its first row at once, as `decide`
  // would write it; a deal that has one is left as it is by the insert, read and decided on.
  if (c.mode === 'send' && !behind(now, known) && (await insertRow(trx, firstRow(now, c, 0, null)))) return send(c, 0);
  for (;;) {
    const e = await lockRow(trx, engine, c.key);
    const verdict = await decide(trx, now, c, e, holder, known);
    // Another transaction made the deal's first row between the read and the insert: decide on it.
    if (verdict !== 'again') return verdict;
  }
}

/** The feed's row as a claim reads it: since when it is followed, up to when it is known complete, and how fresh that must be. */
type Feed = { since: number; covered: number; allowMs: number; lagP99: number };

/**
 * The feed's row, read once per transaction: the claims of one turn share their transaction
 * (src/db/group-commit.ts), and nothing in it writes the feed's row (a page is decided in a
 * transaction of its own, feed-store.ts), so each claim after the first reads no statement.
 */
const feedRead = new WeakMap<Trx, Promise<Feed | undefined>>();

function feedOf(trx: Trx): Promise<Feed | undefined> {
  let read = feedRead.get(trx);
  if (!read) {
    read = runCompiled(trx, 'feedOf', [1], () =>
      trx.selectFrom('feed').select(['since', 'covered_at', 'poll_ms', 'lag_p99_ms']).where('id', '=', 1),
    ).then(
      ([feed]) =>
        feed && {
          since: Number(feed.since),
          covered: Number(feed.covered_at),
          allowMs: 2 * Number(feed.poll_ms) + FEED_SLACK_MS,
          lagP99: Number(feed.lag_p99_ms),
        },
    );
    feedRead.set(trx, read);
  }
  return read;
}
type Verdict = ClaimVerdict | NeedsHolder | FeedBehind | 'again';

async function decide(
  trx: Trx,
  now: number,
  c: ClaimInput,
  e: LedgerRow | undefined,
  holder: Holder | undefined,
  feed: Feed,
): Promise<Verdict> {
  if (!e) return c.mode === 'check' ? { kind: 'notfound' } : writeClaim(trx, now, c, feed, undefined, 0, null);
  let own = e.batch === c.batch && e.row === c.row;
  // This very claim, run again (its commit's answer lost): nothing was sent yet.
  if (own && e.state === 'sending' && e.nonce === c.nonce && e.end_at === null) return send(c, e.n);
  // A docflow the feed found for the deal with no row to hold it: the first row to ask takes it.
  if (e.state === 'submitted' && e.batch === '') {
    await updateRow(trx, c.key, { batch: c.batch, row: c.row, ...(c.personFilter && { pf: c.personFilter }), updated_at: now });
    own = true;
  }
  if (e.state === 'submitted') return decideSubmitted(trx, now, c, e, own, feed);
  return decideHeld(trx, now, c, e, own, holder, feed);
}

const send = (c: ClaimInput, n: number): ClaimVerdict => ({
  kind: 'send',
  requestId: requestIdOf(c.key.bank, c.key.dealId, n, c.key.type),
});

/**
 * Writes try `n` ahead of its call (the deal's first row, or its row made again); 'again' when
 * another made the first row meanwhile. Only while the feed is known complete to within two
 * poll intervals: every try, not only a deal's first, since a database restored from an older
 * copy forgets resubmissions and tries that made a docflow as well as whole deals, and the feed
 * gives them back (src/feed/feed-page.ts) once it is read to its end.
 */
async function writeClaim(
  trx: Trx,
  now: number,
  c: ClaimInput,
  feed: Feed,
  e: LedgerRow | undefined,
  n: number,
  prev: string | null,
): Promise<Verdict> {
  if (behind(now, feed)) return { kind: 'behind', coveredAt: feed.covered, now, allowMs: feed.allowMs };
  if (e) await updateRow(trx, c.key, claimRow(now, c, n, prev));
  else if (!(await insertRow(trx, firstRow(now, c, n, prev)))) return 'again';
  return send(c, n);
}

/** Whether the feed's last complete read is too old for a claim to send. */
const behind = (now: number, feed: Feed): boolean => now - feed.covered > feed.allowMs;

/** The deal's first row, with try `n` written ahead of its call. */
const firstRow = (now: number, c: ClaimInput, n: number, prev: string | null) => ({
  bank: c.key.bank,
  type: c.key.type,
  deal_id: c.key.dealId,
  ...claimRow(now, c, n, prev),
});

/** The deal's row's columns with try `n` written ahead of its call. */
function claimRow(now: number, c: ClaimInput, n: number, prev: string | null) {
  return {
    n,
    state: 'sending',
    batch: c.batch,
    row: c.row,
    job: c.job,
    try_at: now,
    end_at: null,
    timeout_ms: c.timeoutMs,
    lag_ms: c.feedLagMs,
    nonce: c.nonce,
    docflow_id: null,
    outcome: null,
    at: null,
    via: null,
    cn: c.cn || null,
    addr: c.addr || null,
    pf: c.personFilter || null,
    prev,
    answered_at: null,
    updated_at: now,
  };
}

/** The deal has its docflow: this row's own, another deal's (another property), or resubmitted once the registry refused it. */
async function decideSubmitted(trx: Trx, now: number, c: ClaimInput, e: LedgerRow, own: boolean, feed: Feed): Promise<Verdict> {
  // The dealId's docflow is another property's: this row is another deal, --resubmit or not, even
  // on the row that made it (its batch expired and its id was loaded again with another file).
  if (otherProperty(e, c.cn)) return conflict(e);
  if (own) {
    const via = (e.via as Via | null) ?? 'answer';
    const { docflowId, outcome, at, requestId, type } = dealOf(e);
    return { kind: 'own', docflowId, outcome, at, via, ...(requestId && { requestId, type }) };
  }
  if (!c.resubmit || c.mode === 'check') return elsewhere(e);
  // --resubmit makes try n + 1 only of a deal the registry refused: a docflow that is queued, sent,
  // waits for signatures or a payment, or completed stands (the feed shows where it is).
  const st = e.docflow_id
    ? ((await trx.selectFrom('docflows').select('st').where('docflow_id', '=', e.docflow_id).executeTakeFirst())?.st ?? '')
    : '';
  if (st !== 'error') return { kind: 'elsewhere', deal: dealOf(e), stands: st };
  return writeClaim(trx, now, c, feed, e, e.n + 1, JSON.stringify(prevOf(e)));
}

/** A claim with no docflow: its holder still runs, its try waits for the feed, or the row takes (or keeps) it. */
async function decideHeld(
  trx: Trx,
  now: number,
  c: ClaimInput,
  e: LedgerRow,
  own: boolean,
  holder: Holder | undefined,
  feed: Feed,
): Promise<Verdict> {
  // (check) Another row took the claim over: this row's last try was judged before it did.
  if (c.mode === 'check' && !own) return { kind: 'notfound' };
  if (!own && e.job) {
    const known = holder && holder.job === e.job && holder.batch === e.batch && holder.row === e.row;
    if (!known) return { kind: 'holder', job: e.job, batch: e.batch, row: e.row };
    if (holder.alive) return { kind: 'wait', batch: e.batch, row: e.row };
  }
  if (e.state === 'sending') {
    const waiting = reconcileOf(e, c, now, feed);
    if (waiting) return waiting;
    // The feed passed the try (and its lag) without its requestId: it made nothing.
    await updateRow(trx, c.key, { state: 'idle', ...NO_TRY, judged_at: now, updated_at: now });
  }
  if (c.mode === 'check') return { kind: 'notfound' };
  const prev = e.prev ? (JSON.parse(e.prev) as PrevDocflow) : undefined;
  // A resubmission that made nothing yet: the docflow it would replace is the one that counts.
  if (!own && prev && otherProperty(prev, c.cn)) return conflict({ ...prev, docflow_id: prev.docflowId });
  if (own || c.resubmit || !prev) return writeClaim(trx, now, c, feed, e, e.n, e.prev);
  // A resubmission that made nothing, met by a row that does not resubmit: the earlier docflow stands.
  await releaseRow(trx, c.key, e, now);
  return elsewhere({ ...prev, docflow_id: prev.docflowId });
}

/** A try whose answer is not known: wait for the feed to pass its end plus the lag, or never (older than the cursor). */
function reconcileOf(e: LedgerRow, c: ClaimInput, now: number, feed: Feed): ClaimVerdict | undefined {
  const tryAt = Number(e.try_at);
  // The lag the claiming worker allowed, never a shorter one of whoever asks now, nor less than the
  // feed was measured to show docflows late (src/ledger/feed-lag.ts).
  const lag = lagAllowance(Math.max(e.lag_ms ?? 0, c.feedLagMs), feed.lagP99);
  const due = (e.end_at !== null ? Number(e.end_at) : tryAt + (e.timeout_ms ?? 0)) + lag;
  if (tryAt < feed.since) return { kind: 'reconcile', due, now, resolvable: false };
  if (feed.covered < due) return { kind: 'reconcile', due, now, resolvable: true };
  return undefined;
}

export type { DocflowType };
