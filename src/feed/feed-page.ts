/**
 * One page of the news feed, decided in its transaction (src/feed/feed-store.ts runs it): the
 * cursor's compare-and-set, each item matched to its deal by its requestId (a docflow its entry
 * names is followed; a try of ours whose answer was lost gets its docflow; a docflow the ledger
 * does not know becomes its deal's; two docflows for one requestId are a conflict), the states
 * of our docflows and their history, the feed's row. The statements it sends are in
 * page-statements.ts; here, what they carry.
 */
import type { Database, Trx } from '../db/database.js';
import type { DocflowRow, DuplicateRow } from '../db/schema.js';
import type { NewsItem } from '../domain/gateway.js';
import { parseRequestId, requestIdOf, type DocflowType } from '../ledger/entry.js';
import { keyString, NO_TRY, updateRow, type LedgerKey } from '../ledger/rows.js';
import type { NameMatcher } from '../privacy/name-filter.js';
import { databaseIdOf, evidence, itemsBehind, type Witness } from '../ledger/restore.js';
import { restoreOf } from './restore-evidence.js';
import { statusOfItem } from './item-status.js';
import { recordDuplicate, type DuplicateHow } from '../db/duplicates.js';
import { recordActionIn } from '../db/operator-actions.js';
import { newEntry, prevNames, wellFormedRow, type FastEntry, type PageEntry } from './page-rows.js';
import {
  bankClaimedHere,
  insertFoundEntry,
  lockFeedRow,
  readPageRows,
  updateFeedRow,
  writePageDocflows,
  type FeedRow,
  type HistoryRow,
  type PageDocflow,
} from './page-statements.js';

/** A page as the follower read it. */
export interface PageToStore {
  lockToken: string;
  after: string;
  lastToken: string;
  readAt: number;
  items: readonly NewsItem[];
  /** The follower's pause between reads (ms): with the read's own time, kept in the feed's row (a claim allows two such periods since the last complete read). */
  pollMs?: number;
  /**
   * This page reached the newest token a read without `after` gave at this time (database clock,
   * src/feed/feed-mark.ts): everything the feed held then is stored with it, however long the page.
   */
  markAt?: number;
  /** When the page's answer came (database clock: readAt plus the read's time on this host): the lag's sample point. */
  receivedAt?: number;
  /** The lag the follower measured over its last samples (src/ledger/feed-lag.ts), written to the feed's row with this page. */
  lag?: { p99: number; max: number; samples: number };
}

/** What a page's transaction decided, for the work in Redis after its commit. */
export interface Stored {
  resolved: number;
  unknown: number;
  conflicts: string[];
  complete: boolean;
  /** Rows whose try the feed answered: their outcome (if ERR_UNCERTAIN) learns it, or their job is woken. */
  settled: Array<{ batch: string; row: number; job: string | null; outcome: string; docflowId: string; date: string }>;
  /** The page proved the database older than what it had written (src/ledger/restore.ts): why, and the docflows it gave back. */
  restore?: { why: string; lost: number };
  /** The database's id and its feed items after this page: the fleet's witness (restore.ts raiseWitness). */
  witness: Witness;
  /** For each docflow first shown by this page whose creation answer came: when it showed minus when the answer came (ms). */
  lags: number[];
  /** Docflows a deal should not have, first seen on this page (src/db/duplicates.ts). */
  duplicates: DuplicateRow[];
  /** Tries an operator resolved as having no docflow (`ledger --resolve-none`) whose docflow this page shows: the feed's evidence was kept. */
  overruled: Overruled[];
}

/** An operator's "no docflow" for a try, overruled by the feed. */
export interface Overruled {
  batch: string;
  row: number;
  dealId: string;
  requestId: string;
  docflowId: string;
}

/** What a page's items decide, taken in the feed's order in its transaction. */
interface PageDecision {
  trx: Trx;
  now: number;
  /** When the page's answer came: the feed's lag behind a docflow's answer is measured to it. */
  seenAt: number;
  names: Map<NewsItem, NameMatcher>;
  /**
   * The deals all of whose items on the page are of a docflow their entry names, submitted (most
   * items): their entries as first read, which the page does not change, by keyString.
   */
  fast: Map<string, FastEntry>;
  /** The ledger rows of the page's other deals, by keyString (locked on PostgreSQL), as the page leaves them. */
  entries: Map<string, PageEntry>;
  /** The docflows of the page's other items as stored, then every docflow as the page leaves it. */
  docflows: Map<string, PageDocflow>;
  /** The docflows the page moved, and each state it showed: written after its last item. */
  changed: Map<string, DocflowRow>;
  history: HistoryRow[];
  out: Stored;
  /** Items that moved a docflow of ours. */
  followed: number;
  /** Tries above the ledger's for deals this deployment claimed: each a proof the ledger forgot it. */
  triesAbove: string[];
  /** Items of this deployment's banks naming a deal or a try the ledger lacked. */
  lacking: number;
  /** Whether a bank is this deployment's, asked once a page. */
  banks: Map<string, Promise<boolean>>;
}

/** The page's decisions, in its transaction. */
export async function decidePage(
  trx: Trx,
  db: Database,
  now: number,
  page: PageToStore,
  names: Map<NewsItem, NameMatcher>,
  witness?: Witness,
): Promise<Stored | 'moved'> {
  const feed = await lockFeedRow(trx, db.engine === 'postgres');
  if (!feed || feed.cursor !== page.after) return 'moved';
  const databaseId = await databaseIdOf(trx);
  // Fewer items than the fleet saw this database hold: it went back in time, and this page is read again.
  const behind = itemsBehind(witness, databaseId, Number(feed.items));
  const items = page.items.map((item) => ({ item, ours: item.docflow.requestId ? parseRequestId(item.docflow.requestId) : undefined }));
  const { fast, entries, docflows } = await readPageRows(trx, db, items);
  const p: PageDecision = {
    trx,
    now,
    seenAt: page.receivedAt ?? now,
    names,
    fast,
    entries,
    docflows,
    changed: new Map(),
    history: [],
    out: {
      resolved: 0,
      unknown: 0,
      conflicts: [],
      complete: false,
      settled: [],
      witness: { databaseId, items: 0 },
      lags: [],
      duplicates: [],
      overruled: [],
    },
    followed: 0,
    triesAbove: [],
    lacking: 0,
    banks: new Map(),
  };
  for (const { item, ours } of items) await take(p, item, ours);
  if (p.changed.size > 0) await writePageDocflows(trx, [...p.changed.values()], p.history);
  const n = page.items.length;
  // Complete up to this read's start only when it gave nothing after the cursor: a page may be cut
  // short at any size (the v1 feed takes only `after`), so no page's length proves an end.
  p.out.complete = n === 0;
  p.out.witness.items = Number(feed.items) + n;
  const restore = restoreOf(feed, now, behind, p.triesAbove, p.lacking);
  if (restore) p.out.restore = { why: restore.why, lost: p.lacking };
  await updateFeedRow(trx, feedRowAfter(feed, page, p, restore?.set));
  return p.out;
}

/** The feed's row after the page: its cursor, its period, its counters, its restore evidence and lag. */
function feedRowAfter(feed: FeedRow, page: PageToStore, p: PageDecision, restore: Partial<FeedRow> | undefined): Partial<FeedRow> {
  const { now, out, lacking } = p;
  const n = page.items.length;
  return {
    ...restore,
    // The follower's period as it runs: its pause, and the time this read took to store (a
    // slow gateway's read is part of it). A claim allows two of them since the last complete read.
    poll_ms: out.complete && page.pollMs !== undefined ? page.pollMs + Math.max(0, now - page.readAt) : feed.poll_ms,
    lacking: Number(feed.lacking) + lacking,
    lacking_at: feed.lacking_at ?? (lacking > 0 ? now : null),
    cursor: page.lastToken,
    covered_at: Math.max(Number(feed.covered_at), out.complete ? page.readAt : (page.markAt ?? 0)),
    page_max: Math.max(feed.page_max, n),
    items: Number(feed.items) + n,
    resolved: Number(feed.resolved) + out.resolved,
    unknown: Number(feed.unknown) + out.unknown,
    conflicts: Number(feed.conflicts) + out.conflicts.length,
    followed: Number(feed.followed) + p.followed,
    ...(page.lag && { lag_p99_ms: page.lag.p99, lag_max_ms: page.lag.max, lag_samples: page.lag.samples, lag_at: now }),
  };
}

/** A bank is this deployment's once a row of it claimed a deal (a row the feed made has no batch). */
function ourBank(p: PageDecision, bank: string): Promise<boolean> {
  let known = p.banks.get(bank);
  if (!known) {
    known = bankClaimedHere(p.trx, bank);
    p.banks.set(bank, known);
  }
  return known;
}

/** A docflow the deal should not have: recorded once, followed like any other. */
async function duplicate(p: PageDecision, e: PageEntry, item: NewsItem, kept: string, how: DuplicateHow): Promise<void> {
  const d: DuplicateRow = {
    docflow_id: item.docflow.docflowId,
    bank: e.bank,
    type: e.type,
    deal_id: e.deal_id,
    kept_docflow_id: kept,
    request_id: item.docflow.requestId ?? '',
    batch: e.batch,
    row: e.row,
    how,
    seen_at: p.now,
  };
  if (await recordDuplicate(p.trx, d)) p.out.duplicates.push(d);
}

/** The item's state becomes its docflow's (kept to write after the page's last item), and its history's. */
function follow(
  p: PageDecision,
  item: NewsItem,
  base: Pick<DocflowRow, 'bank' | 'type' | 'deal_id' | 'n' | 'request_id'>,
  stored?: Pick<PageDocflow, 'req' | 'req_at'>,
): void {
  const id = item.docflow.docflowId;
  // As stored, or as the page left it; `stored`, the requirement of a docflow first read with its entry.
  const old = p.docflows.get(id);
  const was = old ?? stored;
  const status = statusOfItem(item.docflow, item.date, p.names.get(item));
  const req = status.requirement ?? null;
  const row: DocflowRow = {
    docflow_id: id,
    ...(old ? { bank: old.bank, type: old.type, deal_id: old.deal_id, n: old.n, request_id: old.request_id } : base),
    st: item.docflow.state,
    sat: item.date,
    req,
    // Since when the requirement stands: the first item that showed it.
    req_at: req === null ? null : req === was?.req && was.req_at ? was.req_at : item.date,
    uin: status.paymentUin ?? null,
    amt: status.paymentAmount ?? null,
    payer: status.payer ?? null,
    rerr: status.registryError ?? null,
    files: status.resultFiles === undefined ? null : String(status.resultFiles),
    updated_at: p.now,
  };
  const kept = wellFormedRow(row);
  p.docflows.set(id, kept);
  p.changed.set(id, kept);
  p.history.push({ docflow_id: id, st: kept.st!, sat: kept.sat!, seen_at: p.now });
  p.followed++;
}

/**
 * Most items: a docflow its submitted entry names (every item of this deal on the page is). The
 * first time, the feed's lag behind its answer is measured.
 */
function takeFast(
  p: PageDecision,
  item: NewsItem,
  base: Pick<DocflowRow, 'bank' | 'type' | 'deal_id' | 'n' | 'request_id'>,
  f: FastEntry,
): void {
  const followed = p.docflows.has(item.docflow.docflowId);
  if (!followed && !f.known && f.answered_at !== null) p.out.lags.push(Math.max(0, p.seenAt - Number(f.answered_at)));
  follow(p, item, base, followed || !f.known ? undefined : f);
}

/** One item, in the feed's order: followed, a lost answer found, a conflict, or counted unknown. */
async function take(p: PageDecision, item: NewsItem, ours: ReturnType<typeof parseRequestId>): Promise<void> {
  const docflowId = item.docflow.docflowId;
  const rid = item.docflow.requestId ?? '';
  const key = ours && keyString(ours);
  const base = ours && { bank: ours.bank, type: ours.type, deal_id: ours.dealId, n: ours.n, request_id: rid };
  const f = key !== undefined ? p.fast.get(key) : undefined;
  if (f) return takeFast(p, item, base!, f);
  const e = key !== undefined ? p.entries.get(key) : undefined;
  if (e && e.state === 'submitted' && e.docflow_id === docflowId) {
    // Most items: a docflow its entry names. The first time, the feed's lag behind its answer is measured.
    if (!p.docflows.has(docflowId) && e.answered_at !== null) p.out.lags.push(Math.max(0, p.seenAt - Number(e.answered_at)));
    follow(p, item, base!);
  } else if (p.docflows.has(docflowId)) {
    // Followed before: a docflow a resubmission replaced, or one with no requestId in this item.
    const d = p.docflows.get(docflowId)!;
    follow(p, item, d);
  } else if (!ours) {
    p.out.unknown++;
  } else if (!e) {
    // A docflow of one of our deals that the ledger does not know: its claim was lost with a
    // database restored from an older copy, or another fleet of the bank made it. Either way
    // the deal has it; the first row that claims the deal takes it as its own.
    if (await ourBank(p, ours.bank)) p.lacking++;
    const row = wellFormedRow(newEntry(ours, docflowId, item, p.now));
    await insertFoundEntry(p.trx, row);
    p.entries.set(keyString(ours), row);
    p.out.resolved++;
    follow(p, item, base!);
  } else await takeOfEntry(p, item, ours, e);
}

/** An item of a deal the ledger holds: a later try (a restore), an earlier try's docflow, a second docflow for a requestId, or a lost answer. */
async function takeOfEntry(p: PageDecision, item: NewsItem, ours: LedgerKey & { n: number }, e: PageEntry): Promise<void> {
  const docflowId = item.docflow.docflowId;
  const rid = item.docflow.requestId ?? '';
  const base = { bank: ours.bank, type: ours.type, deal_id: ours.dealId, n: ours.n, request_id: rid };
  if (ours.n > e.n) {
    // A later try than the ledger's: the ledger lost it (restored from an older copy), or
    // another fleet of the bank sent the deal again. The feed's evidence wins: the deal has
    // this docflow, and the first row that claims the deal takes it as its own. A deal this
    // deployment claimed (its row has a batch) proves the ledger forgot.
    if (e.batch !== '') p.triesAbove.push(evidence.tryAbove(rid, e.n));
    if (await ourBank(p, ours.bank)) p.lacking++;
    // The row's property and name filter stay as they are (the page does not read them).
    const { cn: _cn, addr: _addr, pf: _pf, ...found } = newEntry(ours, docflowId, item, p.now);
    const row = wellFormedRow(found);
    await updateRow(p.trx, ours, row);
    p.entries.set(keyString(ours), row);
    p.out.resolved++;
    follow(p, item, base);
  } else if (ours.n < e.n && !prevNames(e, docflowId)) {
    // A try's docflow, shown after the deal's next try was claimed: the feed was later than the
    // wait before that try allowed. A deal with a docflow of its next try has two; one whose next try
    // has none yet takes this one (a docflow that try makes after is a duplicate then, its answer says so).
    if (e.state === 'submitted') {
      await duplicate(p, e, item, e.docflow_id ?? '', 'feed-older-try');
      follow(p, item, base);
    } else await foundForTry(p, e, item, docflowId);
  } else if (requestIdOf(e.bank, e.deal_id, e.n, e.type as DocflowType) !== rid) {
    p.out.unknown++;
  } else if (e.state === 'submitted') {
    // Two docflows for one requestId: the gateway made a second for a call of the same try.
    p.out.conflicts.push(`${rid} ${e.docflow_id ?? ''} ${docflowId}`);
    await duplicate(p, e, item, e.docflow_id ?? '', 'feed-request-id');
    follow(p, item, base);
  } else await foundForTry(p, e, item, docflowId);
}

/** A try of ours whose answer has not come (or never will): the feed answers for it. */
async function foundForTry(p: PageDecision, e: PageEntry, item: NewsItem, docflowId: string): Promise<void> {
  const outcome = item.docflow.state === 'suspended' ? 'suspended' : 'queued';
  const key: LedgerKey = { bank: e.bank, type: e.type as DocflowType, dealId: e.deal_id };
  if (e.state === 'idle' && e.via === 'operator') await overrule(p, e, item, docflowId);
  const submitted = {
    ...NO_TRY,
    prev: null,
    job: null,
    state: 'submitted',
    docflow_id: docflowId,
    outcome,
    at: item.date,
    via: 'feed',
    answered_at: null,
    updated_at: p.now,
  };
  await updateRow(p.trx, key, submitted);
  p.entries.set(keyString(key), { ...e, ...submitted });
  p.out.resolved++;
  p.out.settled.push({ batch: e.batch, row: e.row, job: e.job, outcome, docflowId, date: item.date });
  follow(p, item, { bank: e.bank, type: e.type, deal_id: e.deal_id, n: e.n, request_id: item.docflow.requestId ?? '' });
}

/**
 * The feed shows a docflow for a try an operator resolved as having none: the feed's evidence
 * outranks the guess (the deal has this docflow, and is not sent again), and the conflict is
 * said: in the audit of operator actions, in the same commit, and by the follower's error line.
 */
async function overrule(p: PageDecision, e: PageEntry, item: NewsItem, docflowId: string): Promise<void> {
  const requestId = item.docflow.requestId ?? '';
  p.out.overruled.push({ batch: e.batch, row: e.row, dealId: e.deal_id, requestId, docflowId });
  await recordActionIn(p.trx, {
    who: 'news feed',
    action: 'overrules ledger --resolve-none',
    ...(e.batch !== '' && { batch: e.batch }),
    dealId: e.deal_id,
    detail: `the feed shows docflow ${docflowId} for ${requestId}, which an operator resolved as having none: the deal has this docflow and is not sent again`,
  });
}
