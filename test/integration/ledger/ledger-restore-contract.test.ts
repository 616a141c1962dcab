/**
 * A database restored from an older copy, as the storage contract (both engines): a deal is
 * claimed only while the news feed was read complete within two of its follower's poll
 * intervals (database clock), and a page of the feed tells a restore (the database holds less of
 * the feed than the fleet saw it hold; a try above the ledger's for a deal this deployment
 * claimed) from another deployment on the same gateway account (its docflows carry our INN too).
 */
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { createLedger, type ClaimRequest } from '../../../src/ledger/ledger.js';
import { FeedNotCompleteError } from '../../../src/ledger/claim.js';
import { requestIdOf } from '../../../src/ledger/entry.js';
import { readRestore, readWitness } from '../../../src/ledger/restore.js';
import { storePage } from '../../../src/feed/feed-store.js';
import { deploymentOf } from '../../../src/db/deployment.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { NewsItem } from '../../../src/domain/gateway.js';
import { harness } from '../../helpers/harness.js';
import { ENGINES } from '../../helpers/database.js';
import { feedRow, ledgerRow, putLedgerRow } from '../../helpers/ledger-rows.js';

const BANK = '7701234567';
const rid = (dealId: string, n = 0) => requestIdOf(BANK, dealId, n);
const item = (token: string, requestId: string, docflowId: string): NewsItem => ({
  token,
  date: '2026-11-24T01:00:00.000Z',
  docflow: { docflowId, state: 'queued', requestId },
});

// The client once for an engine's tests (a file's fixtures are made at the top level); a prefix and database of each test's own.
const onEngine = {
  sqlite: harness({ per: 'file', each: ['prefix', 'db'], label: 'restore', engine: 'sqlite' }),
  postgres: harness({ per: 'file', each: ['prefix', 'db'], label: 'restore', engine: 'postgres' }),
};

describe.each(ENGINES)('a database restored from an older copy, on %s', (engine) => {
  const it = onEngine[engine];
  let redis: Redis;
  let prefix: string;
  let keys: Keys;
  let db: Database;
  const options = { timeoutMs: 1000, feedLagMs: 500 };
  const request = (over: Partial<ClaimRequest> = {}): ClaimRequest => ({
    bank: BANK,
    dealId: 'D-1',
    batch: 'a',
    row: 1,
    job: `${keys.bullPrefix}:deals:a.RC0x`,
    resubmit: false,
    mode: 'send',
    nonce: `run-${Math.random()}`,
    ...over,
  });
  /** The feed's row as a follower polling every `pollMs` left it, its last complete read at `coveredAt`. */
  const feedAt = async (coveredAt: number, pollMs: number) => {
    await db.kysely
      .insertInto('feed')
      .values({
        id: 1,
        cursor: '0',
        since: coveredAt - 3_600_000,
        covered_at: coveredAt,
        page_max: 0,
        items: 0,
        resolved: 0,
        unknown: 0,
        conflicts: 0,
        followed: 0,
        poll_ms: pollMs,
      })
      .execute();
  };
  /** One page after `after`, stored by the follower holding the lock. */
  let token = 0;
  const page = async (items: NewsItem[], pollMs = 1000, readMs = 0) => {
    await redis.set(keys.feedLock, 'me');
    const row = await feedRow(db);
    const next = String(++token);
    const readAt = (await db.now()) - readMs;
    return storePage(redis, keys, db, { lockToken: 'me', after: row!.cursor, lastToken: next, readAt, items, pollMs });
  };

  it.beforeEach(({ redis: client, prefix: made, keys: madeKeys, db: database }) => {
    redis = client;
    prefix = made;
    keys = madeKeys;
    db = database.db;
    token = 0;
  });

  it("claims a deal only while the feed was read complete within two of its follower's periods (and a busy host's slack), on the database clock, and writes nothing before", async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await db.now();
    // Read complete 10 s ago by a follower polling every 4 s: 2 s too old.
    await feedAt(t - 10_000, 4000);
    const refused = await ledger.claim(request()).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(FeedNotCompleteError);
    expect((refused as FeedNotCompleteError).behind).toMatchObject({ coveredAt: t - 10_000, allowMs: 8250 });
    expect((refused as Error).message).toMatch(
      /^the news feed is not known complete: its last complete read was 1\d s ago \(a claim needs one within 8250 ms/,
    );
    expect(await ledgerRow(db, BANK, 'D-1')).toBeUndefined();
    // The same read, by a follower polling every 6 s: within two of its intervals.
    await db.kysely.updateTable('feed').set({ poll_ms: 6000 }).where('id', '=', 1).execute();
    expect(await ledger.claim(request())).toEqual({ kind: 'send', requestId: rid('D-1') });
  });

  it('holds every try to the same rule: a row idle between tries, and a resubmission', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await db.now();
    await feedAt(t - 60_000, 1000);
    await putLedgerRow(db, { bank: BANK, deal_id: 'D-2', state: 'idle', batch: 'a', row: 2 });
    await putLedgerRow(db, { bank: BANK, deal_id: 'D-3', state: 'submitted', batch: 'a', row: 3, docflow_id: 'df-3', outcome: 'queued' });
    await db.kysely
      .insertInto('docflows')
      .values({
        docflow_id: 'df-3',
        bank: BANK,
        type: 'encumbrance_request',
        deal_id: 'D-3',
        n: 0,
        request_id: rid('D-3'),
        st: 'error',
        sat: '2026-11-24T01:00:00.000Z',
        req: null,
        req_at: null,
        uin: null,
        amt: null,
        payer: null,
        rerr: null,
        files: null,
        updated_at: t,
      })
      .execute();
    await expect(ledger.claim(request({ dealId: 'D-2', row: 2 }))).rejects.toBeInstanceOf(FeedNotCompleteError);
    await expect(ledger.claim(request({ dealId: 'D-3', batch: 'b', row: 1, resubmit: true }))).rejects.toBeInstanceOf(FeedNotCompleteError);
    expect(await ledgerRow(db, BANK, 'D-2')).toMatchObject({ state: 'idle', try_at: null });
    expect(await ledgerRow(db, BANK, 'D-3')).toMatchObject({ state: 'submitted', n: 0 });
    // A follower reads the feed to its end (an empty page): both may go.
    expect(await page([], 1000)).toMatchObject({ kind: 'stored', complete: true });
    expect(await ledger.claim(request({ dealId: 'D-2', row: 2 }))).toEqual({ kind: 'send', requestId: rid('D-2') });
    expect(await ledger.claim(request({ dealId: 'D-3', batch: 'b', row: 1, resubmit: true }))).toEqual({
      kind: 'send',
      requestId: rid('D-3', 1),
    });
  });

  it("keeps the period of the follower that stored the last complete page, its read's time included, for the claims", async () => {
    await feedAt(await db.now(), 1000);
    await page([], 50, 400);
    const slow = Number((await feedRow(db))!.poll_ms);
    expect(slow).toBeGreaterThanOrEqual(450);
    expect(slow).toBeLessThan(450 + 5000);
    await page([], 250);
    expect(Number((await feedRow(db))!.poll_ms)).toBeGreaterThanOrEqual(250);
    expect(Number((await feedRow(db))!.poll_ms)).toBeLessThan(slow);
    // A full page (the feed may hold more) says nothing of the period.
    const before = (await feedRow(db))!.poll_ms;
    await page([item('1', 'other', 'df-a'), item('2', 'other', 'df-b')], 10, 3000);
    expect((await feedRow(db))!.poll_ms).toBe(before);
  });

  it('tells a restore from the feed behind what the fleet saw the database hold, enters what it gave back, and says so', async () => {
    await deploymentOf(db, prefix);
    await feedAt(await db.now(), 1000);
    await putLedgerRow(db, { bank: BANK, deal_id: 'D-1', state: 'submitted', batch: 'a', row: 1, docflow_id: 'df-1', outcome: 'queued' });
    expect(await page([item('1', rid('D-1'), 'df-1')])).toMatchObject({ kind: 'stored' });
    // The copy: the database as it was here.
    const copy = (await feedRow(db))!;
    // After it, two deals claimed by rows of this deployment, their answers found in the feed.
    for (const [dealId, row] of [
      ['D-4', 4],
      ['D-5', 5],
    ] as const)
      await putLedgerRow(db, {
        bank: BANK,
        deal_id: dealId,
        state: 'sending',
        batch: 'b',
        row,
        n: 0,
        try_at: await db.now(),
        timeout_ms: 1000,
        lag_ms: 500,
      });
    expect(await page([item('2', rid('D-4'), 'df-4'), item('3', rid('D-5'), 'df-5')])).toMatchObject({ resolved: 2 });
    expect(await feedRow(db)).toMatchObject({ lacking: 0 });
    const { databaseId } = await deploymentOf(db, prefix);
    expect(await readWitness(redis, keys)).toEqual({ databaseId, items: 3 });
    expect((await readRestore(db, redis, keys)).suspected).toBe(false);
    // Restored: the feed's row and the ledger as they were in the copy.
    await db.kysely
      .updateTable('feed')
      .set({ cursor: copy.cursor, items: copy.items, covered_at: copy.covered_at })
      .where('id', '=', 1)
      .execute();
    await db.kysely.deleteFrom('ledger').where('deal_id', 'in', ['D-4', 'D-5']).execute();
    await db.kysely.deleteFrom('docflows').where('docflow_id', 'in', ['df-4', 'df-5']).execute();
    // Said at once, before any page: the database holds fewer items than the fleet saw.
    const before = await readRestore(db, redis, keys);
    expect(before.suspected).toBe(true);
    expect(before.sentence).toMatch(
      /^The database was restored from an older copy: the database has stored 1 news feed items, 2 fewer than this fleet saw it hold/,
    );
    // The follower reads the pages again: the docflows made after the copy are entered, counted as given back.
    token = 1;
    const again = await page([item('2', rid('D-4'), 'df-4'), item('3', rid('D-5'), 'df-5')]);
    expect(again).toMatchObject({ kind: 'stored', restore: { lost: 2 } });
    expect(again.kind === 'stored' && again.restore?.why).toMatch(/2 fewer than this fleet saw it hold/);
    expect(await ledgerRow(db, BANK, 'D-4')).toMatchObject({ state: 'submitted', docflow_id: 'df-4', via: 'feed', batch: '' });
    const feed = (await feedRow(db))!;
    expect(feed).toMatchObject({ restore_lost: 2, items: 3, lacking: 2 });
    expect(feed.restore_at).toBe(feed.restore_seen_at);
    const after = await readRestore(db, redis, keys);
    expect(after.suspected).toBe(true);
    expect(after.sentence).toMatch(
      /^The database was restored from an older copy \(first evidence \S+, last \S+\): .*\. The news feed gave back 2 docflows the ledger lacked\./,
    );
    // Caught up: no new evidence, and the episode keeps its first sentence and count.
    expect(await page([item('4', rid('D-6'), 'df-6')])).not.toHaveProperty('restore');
    expect(await feedRow(db)).toMatchObject({ restore_lost: 2, restore_why: feed.restore_why });
  });

  it('tells a restore from a try above the ledger’s for a deal this deployment claimed, and the later docflow wins', async () => {
    await feedAt(await db.now(), 1000);
    await putLedgerRow(db, {
      bank: BANK,
      deal_id: 'D-1',
      state: 'submitted',
      batch: 'a',
      row: 1,
      docflow_id: 'df-1',
      outcome: 'queued',
      cn: '77:01:0001:1',
    });
    const stored = await page([item('1', rid('D-1', 1), 'df-1b')]);
    expect(stored).toMatchObject({ kind: 'stored', resolved: 1, restore: { lost: 1 } });
    expect(stored.kind === 'stored' && stored.restore?.why).toBe(
      `the news feed shows ${rid('D-1', 1)}, a try above the ledger's (try 0 of that deal, claimed by this deployment)`,
    );
    expect(await ledgerRow(db, BANK, 'D-1')).toMatchObject({
      n: 1,
      state: 'submitted',
      docflow_id: 'df-1b',
      via: 'feed',
      batch: '',
      cn: '77:01:0001:1',
    });
    expect((await readRestore(db, redis, keys)).suspected).toBe(true);
  });

  it('never calls another deployment on the same gateway account a restore: its docflows carry our INN, and are counted and entered', async () => {
    await deploymentOf(db, prefix);
    await feedAt(await db.now(), 1000);
    await putLedgerRow(db, { bank: BANK, deal_id: 'D-1', state: 'submitted', batch: 'a', row: 1, docflow_id: 'df-1', outcome: 'queued' });
    // Deals of our INN this ledger never had, and a later try of one of them (the other fleet resubmitted it).
    const first = await page([item('1', rid('X-1'), 'df-x1'), item('2', rid('X-2'), 'df-x2')]);
    const second = await page([item('3', rid('X-1', 1), 'df-x1b'), item('4', 'not-a-request-id-of-ours', 'df-y')]);
    expect(first).not.toHaveProperty('restore');
    expect(second).not.toHaveProperty('restore');
    expect(await ledgerRow(db, BANK, 'X-1')).toMatchObject({ n: 1, docflow_id: 'df-x1b', via: 'feed' });
    const feed = (await feedRow(db))!;
    expect(feed).toMatchObject({ lacking: 3, restore_at: null, restore_lost: 0 });
    expect(Number(feed.lacking_at)).toBeGreaterThan(0);
    expect(await readRestore(db, redis, keys)).toEqual({ suspected: false });
  });

  it('compares a database only with itself: another database on the same Redis, or Redis emptied, is no evidence', async () => {
    await deploymentOf(db, prefix);
    await feedAt(await db.now(), 1000);
    await redis.hset(keys.feedWitness, 'db', 'another-database', 'items', '500');
    expect(await page([item('1', rid('D-9'), 'df-9')])).not.toHaveProperty('restore');
    const { databaseId } = await deploymentOf(db, prefix);
    // Started afresh for this database.
    expect(await readWitness(redis, keys)).toEqual({ databaseId, items: 1 });
    await redis.del(keys.feedWitness);
    expect(await page([])).not.toHaveProperty('restore');
    expect(await readRestore(db, redis, keys)).toEqual({ suspected: false });
  });
});
