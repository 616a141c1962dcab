/**
 * The news feed's state in the database: the table `feed`, one row, whose times are all the
 * database's clock (the hosts' clocks never meet). What must hold:
 * - `cursor`, the token the follower reads after, moves only by a compare-and-set in the page's
 *   transaction: a follower that lost its turn can never move it back;
 * - `since`, when the cursor was first taken: a try older than it is never reconciled from the feed;
 * - `covered_at`: every docflow the gateway made before it, minus the feed's lag, is in the
 *   ledger. Only a page that reached the feed's end moves it (its read gave nothing after the
 *   cursor, or it reached the newest token: feed-mark.ts); no page's length proves an end, and
 *   `page_max` is a figure only;
 * - the counters (items, resolved, unknown, conflicts, followed) only grow; the lag (`lag_*`,
 *   src/ledger/feed-lag.ts) is the follower's last measure; `lacking` and `restore_*` are the
 *   evidence of a restore (src/ledger/restore.ts).
 * The docflows it shows are in `docflows` and `docflow_history` (src/feed/page-statements.ts).
 */
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { RealtyClient } from '../realty/client.js';
import type { NewsItem } from '../domain/gateway.js';
import type { DuplicateRow } from '../db/schema.js';
import { settleUncertain } from '../ledger/outcome-rows.js';
import { parseRequestId, type DocflowType } from '../ledger/entry.js';
import { keyString } from '../ledger/rows.js';
import { filterMatcher, type NameMatcher } from '../privacy/name-filter.js';
import { raiseWitness, readWitness } from '../ledger/restore.js';
import { hasRegistryError } from './item-status.js';
import { decidePage, type Overruled, type PageToStore } from './feed-page.js';

export type { PageToStore };

/**
 * Takes the feed's cursor (the feed from now) unless the deployment has one: before any
 * row claims a deal, so that a try's docflow can never come before the cursor.
 */
export async function ensureFeed(db: Database, client: RealtyClient): Promise<void> {
  if (await db.kysely.selectFrom('feed').select('id').where('id', '=', 1).executeTakeFirst()) return;
  const page = await client.news();
  await db.transaction(async (trx) => {
    const now = await db.now(trx);
    await trx
      .insertInto('feed')
      .values({
        id: 1,
        cursor: page.lastToken,
        since: now,
        covered_at: now,
        page_max: 0,
        items: 0,
        resolved: 0,
        unknown: 0,
        conflicts: 0,
        followed: 0,
      })
      .onConflict((c) => c.column('id').doNothing())
      .execute();
  });
}

export interface ReadStart {
  /** The token to read after; undefined before the feed has a cursor (ensureFeed). */
  cursor: string | undefined;
  /** The database's clock (ms) as the read begins. */
  now: number;
}

/** The cursor and the database's clock. */
export async function beginRead(db: Database): Promise<ReadStart> {
  const [row, now] = await Promise.all([db.kysely.selectFrom('feed').select('cursor').where('id', '=', 1).executeTakeFirst(), db.now()]);
  return { cursor: row?.cursor, now };
}

export type StoreResult =
  | { kind: 'lost' }
  | { kind: 'moved' }
  /**
   * `complete`: the page held all the feed had (the feed is known up to the read's time).
   * `wake`: the job keys of rows whose try this page resolved and that have no outcome yet
   * (each sleeps until its try's end plus `--feed-lag-ms`): wakeRows runs them now.
   */
  | {
      kind: 'stored';
      resolved: number;
      unknown: number;
      conflicts: string[];
      complete: boolean;
      wake: string[];
      /** The page proved the database restored from an older copy (src/ledger/restore.ts): why, and the docflows it gave back. */
      restore?: { why: string; lost: number };
      /** The feed's lag behind the answers of the docflows it first showed (ms, src/ledger/feed-lag.ts). */
      lags: number[];
      /** Docflows a deal should not have, first seen on this page (src/db/duplicates.ts). */
      duplicates: DuplicateRow[];
      /** Tries an operator said had no docflow, whose docflow this page showed (feed-page.ts). */
      overruled: Overruled[];
    };

/**
 * The deal's persons' name filters (src/privacy/name-filter.ts) for the items with a registry
 * error: a registry's text masked with them, however it spells them. One query for a page's
 * errors; none for a page without one.
 */
async function personsOfErrors(db: Database, items: readonly NewsItem[]): Promise<Map<NewsItem, NameMatcher>> {
  const asked = items.flatMap((item) => {
    const ours = hasRegistryError(item.docflow) && item.docflow.requestId ? parseRequestId(item.docflow.requestId) : undefined;
    return ours ? [{ item, key: keyString(ours) }] : [];
  });
  const names = new Map<NewsItem, NameMatcher>();
  if (asked.length === 0) return names;
  const parsed = asked.map(({ key }) => key.split('\u0000'));
  const rows = await db.kysely
    .selectFrom('ledger')
    .select(['bank', 'type', 'deal_id', 'pf'])
    .where('deal_id', 'in', [...new Set(parsed.map((p) => p[2]!))])
    .execute();
  const filters = new Map(rows.map((r) => [keyString({ bank: r.bank, type: r.type as DocflowType, dealId: r.deal_id }), r.pf]));
  for (const { item, key } of asked) {
    const matcher = filterMatcher(filters.get(key) ?? undefined);
    if (matcher) names.set(item, matcher);
  }
  return names;
}

/** storeRead's result alone. */
export async function storePage(redis: Redis, keys: Keys, db: Database, page: PageToStore): Promise<StoreResult> {
  return (await storeRead(redis, keys, db, page)).result;
}

/** A page committed (or refused), and the witness's raise after its commit, sent and not yet answered. */
export interface Committed {
  result: StoreResult;
  /** The database's clock when the page was stored. */
  now?: number;
  /** The raise of the fleet's witness (restore.ts), sent right after the commit; settled when Redis answered. */
  raised: Promise<void>;
}

/**
 * Stores one page: one transaction that moves the cursor, the ledger (lost answers found) and
 * the docflows' states; then, in Redis, the rows it settled. Also the database's clock when it
 * was stored: a time before any read that begins after this call returns.
 */
export async function storeRead(redis: Redis, keys: Keys, db: Database, page: PageToStore): Promise<{ result: StoreResult; now?: number }> {
  const { result, now, raised } = await commitRead(redis, keys, db, page);
  await raised;
  return { result, ...(now !== undefined && { now }) };
}

/**
 * storeRead up to its commit: the witness's raise is sent, not awaited, so that the follower's
 * next page begins its transaction without waiting for Redis's answer (the follower awaits the
 * raise before it counts the page stored). The next page's witness read, sent on the same
 * connection after the raise, is answered after it.
 */
export async function commitRead(redis: Redis, keys: Keys, db: Database, page: PageToStore): Promise<Committed> {
  // The fleet's lock (Redis) says who follows; the cursor's compare-and-set (below) is the fence.
  // The witness is read before the database (and raised after its commit): a database that kept
  // its writes is never behind it. Both asked at once: one round trip.
  const [holder, witness] = await Promise.all([redis.get(keys.feedLock), readWitness(redis, keys)]);
  if (holder !== page.lockToken) return { result: { kind: 'lost' }, raised: Promise.resolve() };
  const names = await personsOfErrors(db, page.items);
  let now = 0;
  const wake: string[] = [];
  const stored = await db.transaction(async (trx) => {
    now = await db.now(trx);
    const decided = await decidePage(trx, db, now, page, names, witness);
    if (decided === 'moved') return decided;
    wake.length = 0;
    for (const s of decided.settled) {
      if (s.batch === '') continue;
      // Its row may have ended ERR_UNCERTAIN meanwhile (the feed was late or down): now it knows, in the same commit.
      const message = `the gateway's answer was lost; its docflow was found in the news feed (${s.date})`;
      const has = await settleUncertain(trx, s.batch, s.row, { outcome: s.outcome, docflowId: s.docflowId, message }, now);
      // No outcome yet: its job sleeps until the try's end plus the feed lag, or is about to.
      if (!has && s.job) wake.push(s.job);
    }
    return decided;
  });
  if (stored === 'moved') return { result: { kind: 'moved' }, raised: Promise.resolve() };
  const raised = raiseWitness(redis, keys, stored.witness);
  // Awaited by the caller; never unhandled meanwhile.
  raised.catch(() => undefined);
  const { resolved, unknown, conflicts, complete, restore, lags, duplicates, overruled } = stored;
  return {
    result: { kind: 'stored', resolved, unknown, conflicts, complete, wake, lags, duplicates, overruled, ...(restore && { restore }) },
    now,
    raised,
  };
}

export interface FeedState {
  cursor?: string;
  since?: number;
  coveredAt?: number;
  items: number;
  resolved: number;
  unknown: number;
  conflicts: number;
  /** Items that moved a docflow of ours (its state). */
  followed: number;
  /** The lag measured (src/ledger/feed-lag.ts): how late the feed shows a docflow after its answer, ms; absent before the first sample. */
  lag?: { p99: number; max: number; samples: number; at: number };
}

export async function readFeedState(db: Database): Promise<FeedState> {
  const row = await db.kysely.selectFrom('feed').selectAll().where('id', '=', 1).executeTakeFirst();
  if (!row) return { items: 0, resolved: 0, unknown: 0, conflicts: 0, followed: 0 };
  return {
    cursor: row.cursor,
    since: Number(row.since),
    coveredAt: Number(row.covered_at),
    items: Number(row.items),
    resolved: Number(row.resolved),
    unknown: Number(row.unknown),
    conflicts: Number(row.conflicts),
    followed: Number(row.followed),
    ...(row.lag_at !== null && {
      lag: { p99: Number(row.lag_p99_ms), max: Number(row.lag_max_ms), samples: Number(row.lag_samples), at: Number(row.lag_at) },
    }),
  };
}

/** The database's clock, in ms (what `covered_at` is compared with). */
export async function feedTime(db: Database): Promise<number> {
  return db.now();
}
