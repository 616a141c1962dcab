/**
 * The ledger's rules against a real database (both engines: the storage contract) and a real
 * Redis (the batch's work around it): who may send a deal, when a try whose answer was lost may
 * be sent again, what an outcome does to its deal's entry, what the feed follower's page does,
 * that a batch (its outcomes with it) never loses life; and, in Redis alone, that a job's data is
 * written only under its lock.
 */
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { storedProperty } from '../../../src/input/property-key.js';
import { createLedger, readSubmittedDeals, type ClaimRequest } from '../../../src/ledger/ledger.js';
import { requestIdOf } from '../../../src/ledger/entry.js';
import { createOutcomeStore } from '../../../src/outcomes/store.js';
import { createBatchStore } from '../../../src/batch/batch-store.js';
import { storePage } from '../../../src/feed/feed-store.js';
import type { OutcomeRecord } from '../../../src/domain/outcome.js';
import type { Keys } from '../../../src/redis/keys.js';
import { updateLockedJobData } from '../../../src/queue/locked-update.js';
import type { NewsItem } from '../../../src/domain/gateway.js';
import { harness } from '../../helpers/harness.js';
import { docflowRow, feedRow, ledgerRow, putDocflowRow } from '../../helpers/ledger-rows.js';
import { deleteOutcome, putOutcome, storedOutcome } from '../../helpers/outcomes.js';

const BANK = '7701234567';
const HOUR = 3_600_000;
/** The requestId of the deal's try `n`: `<bank>:reg:<n>:<dealId>`. */
const rid = (dealId: string, n = 0) => requestIdOf(BANK, dealId, n);

const record = (row: number, dealId: string, fields: Partial<OutcomeRecord>): OutcomeRecord => ({
  row,
  dealId,
  outcome: 'queued',
  attempts: 1,
  finishedAt: '2026-11-24T01:00:00.000Z',
  ...fields,
});

// The client once for an engine's tests (a file's fixtures are made at the top level); a prefix and database of each test's own.
const onEngine = {
  sqlite: harness({ per: 'file', each: ['prefix', 'db'], label: 'ledger', engine: 'sqlite' }),
  postgres: harness({ per: 'file', each: ['prefix', 'db'], label: 'ledger', engine: 'postgres' }),
};

describe.each(['sqlite', 'postgres'] as const)('the ledger on %s', (engine) => {
  const it = onEngine[engine];
  let redis: Redis;
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
    nonce: 'run-1',
    ...over,
  });
  /** The feed shows one item (a page of one, read at `t`): the docflow of `dealId`'s first try. */
  const feedShows = async (t: number, docflowId: string, state: string, dealId: string, date: string) => {
    await redis.set(keys.feedLock, 'me');
    const item: NewsItem = { token: '1', date, docflow: { docflowId, state, requestId: rid(dealId) } };
    return storePage(redis, keys, db, { lockToken: 'me', after: '0', lastToken: '1', readAt: t, items: [item] });
  };
  /** The deal's ledger row, as the database has it. */
  const entry = (dealId = 'D-1') => ledgerRow(db, BANK, dealId);
  /** The feed as a follower leaves it: started at `since`, complete up to `coveredAt`, its cursor at '0'. */
  const feedAt = async (since: number, coveredAt: number) => {
    await db.kysely
      .insertInto('feed')
      .values({
        id: 1,
        cursor: '0',
        since,
        covered_at: coveredAt,
        page_max: 0,
        items: 0,
        resolved: 0,
        unknown: 0,
        conflicts: 0,
        followed: 0,
      })
      .execute();
  };
  /** The feed's row changed as a follower (or a restart of the feed) would have. */
  const feedSet = async (set: { since?: number; covered_at?: number }) => {
    await db.kysely.updateTable('feed').set(set).where('id', '=', 1).execute();
  };
  /** A docflow's state as the feed last showed it (its `docflows` row). */
  const docflowShows = async (docflowId: string, dealId: string, st: string) => {
    if (await docflowRow(db, docflowId)) {
      await db.kysely.updateTable('docflows').set({ st }).where('docflow_id', '=', docflowId).execute();
    } else {
      await putDocflowRow(db, {
        docflow_id: docflowId,
        bank: BANK,
        deal_id: dealId,
        request_id: rid(dealId),
        st,
        sat: '2026-11-24T01:30:00.000Z',
      });
    }
  };
  /** The database's clock: what the ledger's times are. */
  const now = () => db.now();

  it.beforeEach(({ redis: client, keys: madeKeys, db: store }) => {
    redis = client;
    keys = madeKeys;
    db = store.db;
  });

  it('claims nothing before the feed has a cursor, then claims a new deal under <bank>:reg:0:<dealId> and writes the try ahead', async () => {
    const ledger = createLedger(redis, keys, db, options);
    expect(await ledger.claim(request())).toEqual({ kind: 'nofeed' });
    expect(await entry()).toBeUndefined();
    const start = await now();
    await feedAt(start, start);
    const found = { cadastralNumber: '54:35:1:1', property: { cadastralNumber: '54:35:1:1' } };
    expect(await ledger.claim(request(found))).toEqual({ kind: 'send', requestId: `${BANK}:reg:0:D-1` });
    const e = await entry();
    expect(e).toMatchObject({
      type: 'encumbrance_request',
      state: 'sending',
      batch: 'a',
      row: 1,
      n: 0,
      job: request().job,
      timeout_ms: 1000,
      lag_ms: 500,
      nonce: 'run-1',
      end_at: null,
    });
    expect(await ledger.read(BANK, 'D-1')).toMatchObject({
      dealId: 'D-1',
      bank: BANK,
      requestId: `${BANK}:reg:0:D-1`,
      state: 'sending',
      row: 1,
    });
    expect(e!.try_at).toBeGreaterThanOrEqual(start);
    // The cadastral number suggest found is kept by the claim itself: a later run of the row reads
    // it there, and no copy of it is written to Redis; another row of the deal is not given it.
    expect(await redis.exists(keys.checkpoints('a'))).toBe(0);
    expect((await ledger.lookup(BANK, 'D-1', 'a', 1)).cadastralNumber).toBe('54:35:1:1');
    expect((await ledger.lookup(BANK, 'D-1', 'a', 2)).cadastralNumber).toBeUndefined();
  });

  it('makes a second row of the deal wait while the holder lives, and lets it take over a claim whose holder is gone', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await now();
    await feedAt(t, t);
    const holder = request();
    await redis.hset(holder.job, 'data', '{}');
    await ledger.claim(holder);
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-1', 'definite');
    const other = request({ batch: 'b', row: 5, job: `${keys.bullPrefix}:deals:b.RC0x`, cadastralNumber: '54:35:1:1' });
    expect(await ledger.claim(other)).toEqual({ kind: 'wait', batch: 'a', row: 1 });
    expect(await entry()).toMatchObject({ batch: 'a', row: 1, state: 'idle' });
    // The waiting row has no claim to keep what suggest found: Redis keeps it until its next run.
    expect(await redis.hget(keys.checkpoints('b'), '5')).toBe('54:35:1:1');
    expect((await ledger.lookup(BANK, 'D-1', 'b', 5)).cadastralNumber).toBe('54:35:1:1');
    // The holder's row got an outcome (or its job is gone): the claim is free again, same requestId.
    await putOutcome(db, 'a', record(1, 'D-1', { outcome: 'unavailable' }));
    expect(await ledger.claim(other)).toEqual({ kind: 'send', requestId: rid('D-1') });
    expect(await entry()).toMatchObject({ batch: 'b', row: 5, state: 'sending', job: other.job });
  });

  it('sends a try whose answer was lost again only once the feed has passed it, its lag included, without its requestId', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await now();
    await feedAt(t, t);
    await ledger.claim(request());
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-1', 'uncertain');
    const endAt = (await entry())!.end_at!;
    expect(endAt).toBeGreaterThanOrEqual(t);
    const verdict = await ledger.claim(request());
    expect(verdict).toMatchObject({ kind: 'reconcile', due: endAt + 500, resolvable: true });
    // The feed caught up to just before the due time: still not.
    await feedSet({ covered_at: endAt + 499 });
    expect((await ledger.claim(request())).kind).toBe('reconcile');
    await feedSet({ covered_at: endAt + 500 });
    expect(await ledger.claim(request({ mode: 'check' }))).toEqual({ kind: 'notfound' });
    expect(await entry()).toMatchObject({ state: 'idle', try_at: null, end_at: null });
    expect(await ledger.claim(request())).toEqual({ kind: 'send', requestId: rid('D-1') });
  });

  it('answers a claim run twice (its reply lost) as the same claim, and lets only the run that claimed settle its try', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await now();
    await feedAt(t, t);
    expect(await ledger.claim(request())).toEqual({ kind: 'send', requestId: rid('D-1') });
    // The same claim again (its commit's answer was lost): nothing was sent yet.
    expect(await ledger.claim(request())).toEqual({ kind: 'send', requestId: rid('D-1') });
    // A later run of the row (its job taken over) finds the try in flight: it must ask the feed.
    expect((await ledger.claim(request({ nonce: 'run-2' }))).kind).toBe('reconcile');
    // Only the run that claimed may settle the try: a settle from any other run (one whose job
    // was taken over, coming back late) changes nothing.
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-2', 'definite');
    expect(await entry()).toMatchObject({ state: 'sending', nonce: 'run-1' });
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-1', 'definite');
    expect(await entry()).toMatchObject({ state: 'idle', nonce: null });
  });

  it("never calls a try older than the feed's cursor not found: the feed cannot tell", async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await now();
    await feedAt(t, t);
    await ledger.claim(request());
    // The feed's state was lost and started again later: the try is older than its cursor.
    await feedSet({ since: t + 10 * HOUR, covered_at: t + 11 * HOUR });
    expect(await ledger.claim(request({ nonce: 'run-2' }))).toMatchObject({ kind: 'reconcile', resolvable: false });
  });

  it("refuses an operator's answer for a try that may still be answered, and takes it once the try ended", async () => {
    const ledger = createLedger(redis, keys, db, { ...options, timeoutMs: 60_000 });
    const t = await now();
    await feedAt(t, t);
    expect(await ledger.claim(request())).toMatchObject({ kind: 'send' });
    // Its call went out a moment ago, with a minute to answer.
    expect(await ledger.resolve(BANK, 'D-1', 'none')).toBe('in-flight');
    expect(await ledger.resolve(BANK, 'D-1', { docflowId: 'df-1', outcome: 'queued' })).toBe('in-flight');
    expect(await entry()).toMatchObject({ state: 'sending' });
    // The call ended without an answer: now an operator may say what the gateway has.
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-1', 'uncertain');
    expect(await ledger.resolve(BANK, 'D-1', { docflowId: 'df-1', outcome: 'queued' })).toBe('resolved');
    expect(await entry()).toMatchObject({ state: 'submitted', docflow_id: 'df-1', via: 'operator', try_at: null, end_at: null });
    expect(await ledger.resolve(BANK, 'D-1', 'none')).toBe('not-waiting');
  });

  it('lets the feed overrule an operator\'s "no docflow" for a try, and says so in the audit and the page\'s answer', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await now();
    await feedAt(t, t);
    expect(await ledger.claim(request())).toMatchObject({ kind: 'send' });
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-1', 'uncertain');
    // The operator looked at the gateway too early and said the try made nothing.
    expect(await ledger.resolve(BANK, 'D-1', 'none')).toBe('resolved');
    expect(await entry()).toMatchObject({ state: 'idle', via: 'operator' });
    // The feed then shows that try's docflow: the deal has it, and the guess is reported, not kept.
    const stored = await feedShows(t + 1000, 'df-late', 'queued', 'D-1', '2026-11-24T01:00:00.000Z');
    expect(stored).toMatchObject({
      kind: 'stored',
      resolved: 1,
      overruled: [{ batch: 'a', row: 1, dealId: 'D-1', requestId: rid('D-1'), docflowId: 'df-late' }],
    });
    expect(await entry()).toMatchObject({ state: 'submitted', docflow_id: 'df-late', via: 'feed' });
    const audit = await db.kysely.selectFrom('operator_actions').selectAll().where('deal_id', '=', 'D-1').execute();
    expect(audit).toMatchObject([
      { who: 'news feed', action: 'overrules ledger --resolve-none', batch: 'a', detail: expect.stringContaining('df-late') },
    ]);
    // A try the feed answers with no operator's word before it is no conflict.
    expect(await ledger.claim(request({ dealId: 'D-2', row: 2, nonce: 'run-2' }))).toMatchObject({ kind: 'send' });
    await ledger.settle(BANK, 'D-2', rid('D-2'), 'a', 2, 'run-2', 'uncertain');
    const next: NewsItem = {
      token: '2',
      date: '2026-11-24T01:00:00.000Z',
      docflow: { docflowId: 'df-2', state: 'queued', requestId: rid('D-2') },
    };
    expect(
      await storePage(redis, keys, db, { lockToken: 'me', after: '1', lastToken: '2', readAt: t + 2000, items: [next] }),
    ).toMatchObject({
      resolved: 1,
      overruled: [],
    });
  });

  it('gives a row its own docflow again, another row already_submitted, and a --resubmit row the next number with the earlier docflow kept aside', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const store = createOutcomeStore(redis, keys, { db });
    const t = await now();
    await feedAt(t, t);
    await ledger.claim(request());
    await store.record('a', record(1, 'D-1', { docflowId: 'df-1' }), {
      ledger: { bank: BANK, requestId: rid('D-1'), resubmit: false, via: 'answer' },
    });
    expect(await entry()).toMatchObject({
      state: 'submitted',
      docflow_id: 'df-1',
      outcome: 'queued',
      batch: 'a',
      row: 1,
      via: 'answer',
      job: null,
    });
    expect(await ledger.read(BANK, 'D-1')).toMatchObject({ via: 'answer' });
    expect(await ledger.claim(request())).toMatchObject({ kind: 'done', record: { docflowId: 'df-1' } });
    // Its batch expired and was loaded again: the row's outcome is gone, the ledger's is not.
    await deleteOutcome(db, 'a', 1);
    expect(await ledger.claim(request())).toMatchObject({ kind: 'own', docflowId: 'df-1', outcome: 'queued', via: 'answer' });
    const b = request({ batch: 'b', row: 3 });
    expect(await ledger.claim(b)).toMatchObject({ kind: 'elsewhere', deal: { docflowId: 'df-1', batch: 'a', row: 1 } });
    // --resubmit sends it again only once the registry refused it: before, its docflow stands (the feed showed nothing yet) ...
    expect(await ledger.claim({ ...b, resubmit: true })).toMatchObject({ kind: 'elsewhere', stands: '', deal: { docflowId: 'df-1' } });
    await docflowShows('df-1', 'D-1', 'sent');
    expect(await ledger.claim({ ...b, resubmit: true })).toMatchObject({ kind: 'elsewhere', stands: 'sent' });
    // ... and once the feed showed the registry's refusal, it goes as the next resubmission.
    await docflowShows('df-1', 'D-1', 'error');
    expect(await ledger.claim({ ...b, resubmit: true })).toEqual({ kind: 'send', requestId: rid('D-1', 1) });
    expect(await entry()).toMatchObject({ state: 'sending', n: 1, batch: 'b', row: 3, docflow_id: null });
    expect(JSON.parse((await entry())!.prev!)).toMatchObject({ n: 0, docflowId: 'df-1', batch: 'a', row: 1 });
    // The resubmission is refused (400): the deal is back to its first docflow.
    await ledger.settle(BANK, 'D-1', rid('D-1', 1), 'b', 3, 'run-1', 'definite');
    const refused = await store.record('b', record(3, 'D-1', { outcome: 'rejected' }), { ledger: { bank: BANK, resubmit: true } });
    expect(refused).toEqual({ kind: 'written' });
    expect(await entry()).toMatchObject({ state: 'submitted', docflow_id: 'df-1', n: 0, batch: 'a', row: 1, prev: null });
  });

  describe('the property a deal was claimed for', () => {
    const P101 = { cadastralNumber: '54:35:012345:101', address: 'новосибирская область, новосибирск, ленина, 1, 2' };
    const P222 = { cadastralNumber: '54:35:012345:222', address: 'новосибирская область, новосибирск, ленина, 1, 5' };
    /** Row 2 of batch a claims D-7 for 54:35:012345:101 and makes df-1. */
    const registered = async () => {
      const ledger = createLedger(redis, keys, db, options);
      const store = createOutcomeStore(redis, keys, { db });
      const t = await now();
      await feedAt(t, t);
      expect(await ledger.claim(request({ dealId: 'D-7', row: 2, property: P101 }))).toMatchObject({ kind: 'send' });
      await store.record('a', record(2, 'D-7', { docflowId: 'df-1' }), {
        ledger: { bank: BANK, requestId: rid('D-7'), resubmit: false, via: 'answer', property: P101 },
      });
      return { ledger, store };
    };

    it('keeps the cadastral number and the address in the entry, and the load reads them', async () => {
      const { ledger } = await registered();
      // The address as a digest: compared, never read back as text.
      const stored = storedProperty(P101);
      expect(stored.address).toMatch(/^[0-9a-f]{16}$/);
      expect(await entry('D-7')).toMatchObject({ state: 'submitted', cn: P101.cadastralNumber, addr: stored.address });
      expect(JSON.stringify(await entry('D-7'))).not.toContain('ленина');
      expect(await ledger.read(BANK, 'D-7')).toMatchObject({ property: stored });
      expect(await readSubmittedDeals(db, BANK, ['D-7', 'D-8'])).toEqual([
        { docflowId: 'df-1', outcome: 'queued', batch: 'a', row: 2, at: '2026-11-24T01:00:00.000Z', via: 'answer', property: stored },
        undefined,
      ]);
    });

    it('answers a claim of the dealId for another cadastral number with a conflict naming the registered one, --resubmit or not', async () => {
      const { ledger } = await registered();
      const other = request({ dealId: 'D-7', batch: 'b', row: 5, property: P222 });
      const conflict = {
        kind: 'conflict',
        deal: {
          docflowId: 'df-1',
          outcome: 'queued',
          batch: 'a',
          row: 2,
          at: '2026-11-24T01:00:00.000Z',
          requestId: rid('D-7'),
          type: 'encumbrance_request',
        },
        property: storedProperty(P101),
      };
      expect(await ledger.claim(other)).toEqual(conflict);
      expect(await ledger.claim({ ...other, resubmit: true })).toEqual(conflict);
      expect(await ledger.claim({ ...other, mode: 'check' })).toEqual(conflict);
      // The entry is as it was: nothing claimed, nothing to send.
      expect(await entry('D-7')).toMatchObject({ state: 'submitted', n: 0, batch: 'a', row: 2, cn: P101.cadastralNumber });
      // The same property from another batch is the same deal: already submitted, as before.
      const same = request({ dealId: 'D-7', batch: 'c', row: 9, property: { ...P101, address: 'written another way' } });
      expect(await ledger.claim(same)).toMatchObject({ kind: 'elsewhere', deal: { docflowId: 'df-1' } });
    });

    it('keeps the property of a docflow a resubmission would replace: another property cannot take its place', async () => {
      const { ledger } = await registered();
      // The registry refused df-1 (the feed showed it so): the deal may be sent again.
      await docflowShows('df-1', 'D-7', 'error');
      const again = request({ dealId: 'D-7', batch: 'b', row: 3, property: P101, resubmit: true });
      expect(await ledger.claim(again)).toEqual({ kind: 'send', requestId: rid('D-7', 1) });
      await ledger.settle(BANK, 'D-7', rid('D-7', 1), 'b', 3, 'run-1', 'definite');
      // The resubmission made nothing yet (idle, its prev kept aside): another property is still a conflict.
      const other = request({ dealId: 'D-7', batch: 'c', row: 5, property: P222, resubmit: true });
      expect(await ledger.claim(other)).toMatchObject({
        kind: 'conflict',
        deal: { docflowId: 'df-1', batch: 'a', row: 2 },
        property: storedProperty(P101),
      });
    });

    it('takes an entry that kept no property (the import of a results file without one) for any property: no conflict on missing data', async () => {
      const { ledger } = await registered();
      await db.kysely.updateTable('ledger').set({ cn: null, addr: null }).where('bank', '=', BANK).where('deal_id', '=', 'D-7').execute();
      const other = request({ dealId: 'D-7', batch: 'b', row: 5, property: P222 });
      expect(await ledger.claim(other)).toMatchObject({ kind: 'elsewhere', deal: { docflowId: 'df-1' } });
    });

    it("never gives a row of another property the deal's docflow instead of its own failure", async () => {
      const { store } = await registered();
      const notFound = await store.record('b', record(5, 'D-7', { outcome: 'not_found' }), {
        ledger: { bank: BANK, resubmit: false, property: { address: P222.address } },
      });
      expect(notFound).toEqual({ kind: 'written' });
      expect(await storedOutcome(db, 'b', 5)).toMatchObject({ outcome: 'not_found' });
      // The same address: the deal's docflow, as before.
      const same = await store.record('c', record(6, 'D-7', { outcome: 'not_found' }), {
        ledger: { bank: BANK, resubmit: false, property: { address: P101.address } },
      });
      expect(same).toMatchObject({ kind: 'submitted', own: false, deal: { docflowId: 'df-1' } });
      // A writer that names no property is taken as before.
      const unnamed = await store.record('d', record(7, 'D-7', { outcome: 'failed' }), { ledger: { bank: BANK, resubmit: false } });
      expect(unnamed).toMatchObject({ kind: 'submitted', own: false, deal: { docflowId: 'df-1' } });
      // None of them changed the deal's entry.
      expect(await entry('D-7')).toMatchObject({ state: 'submitted', docflow_id: 'df-1', batch: 'a', row: 2 });
    });
  });

  it("records the deal's docflow instead of a failure when the ledger has one, and reports a second docflow for one deal", async () => {
    const ledger = createLedger(redis, keys, db, options);
    const store = createOutcomeStore(redis, keys, { db });
    const t = await now();
    await feedAt(t, t);
    await ledger.claim(request());
    await store.record('a', record(1, 'D-1', { docflowId: 'df-1' }), {
      ledger: { bank: BANK, requestId: rid('D-1'), resubmit: false },
    });
    const failed = await store.record('c', record(2, 'D-1', { outcome: 'not_found' }), { ledger: { bank: BANK, resubmit: false } });
    expect(failed).toMatchObject({ kind: 'submitted', own: false, deal: { docflowId: 'df-1', batch: 'a', row: 1 } });
    expect(await storedOutcome(db, 'c', 2)).toBeUndefined();
    const twice = await store.record('a', record(1, 'D-1', { docflowId: 'df-2' }), {
      ledger: { bank: BANK, requestId: rid('D-1'), resubmit: false },
    });
    expect(twice).toEqual({ kind: 'conflict', deal: { docflowId: 'df-1', batch: 'a', row: 1 } });
    expect(await entry()).toMatchObject({ docflow_id: 'df-1' });
  });

  it("ends a claim that made no docflow with the row's outcome, and keeps one whose try may have made one (ERR_UNCERTAIN)", async () => {
    const ledger = createLedger(redis, keys, db, options);
    const store = createOutcomeStore(redis, keys, { db });
    const t = await now();
    await feedAt(t, t);
    await ledger.claim(request());
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-1', 'definite');
    await store.record('a', record(1, 'D-1', { outcome: 'unavailable' }), { ledger: { bank: BANK, resubmit: false } });
    expect(await entry()).toBeUndefined();
    await ledger.claim(request({ dealId: 'D-2', row: 2 }));
    await ledger.settle(BANK, 'D-2', rid('D-2'), 'a', 2, 'run-1', 'uncertain');
    await store.record('a', record(2, 'D-2', { outcome: 'failed', errorCode: 'ERR_UNCERTAIN' }), {
      ledger: { bank: BANK, resubmit: false, keepClaim: true },
    });
    expect(await entry('D-2')).toMatchObject({ state: 'sending' });
    // The feed shows the docflow later: the ledger has it, and the row's ERR_UNCERTAIN becomes it
    // (the row has ended: no job to wake).
    expect(await feedShows(t, 'df-late', 'suspended', 'D-2', '2026-11-24T02:00:00.000Z')).toMatchObject({ resolved: 1, wake: [] });
    expect(await entry('D-2')).toMatchObject({ state: 'submitted', docflow_id: 'df-late', via: 'feed' });
    const row = (await storedOutcome(db, 'a', 2))!;
    expect(row).toMatchObject({ row: 2, dealId: 'D-2', outcome: 'suspended', docflowId: 'df-late', httpStatus: 201, attempts: 1 });
    expect(row).not.toHaveProperty('errorCode');
    expect(row.errorMessage).toContain('found in the news feed');
  });

  it('records a docflow the feed found for the row instead of ERR_UNCERTAIN, when it came first', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const store = createOutcomeStore(redis, keys, { db });
    const t = await now();
    await feedAt(t, t);
    await ledger.claim(request());
    // The row has no outcome yet: its job is named, for the follower to wake.
    expect(await feedShows(t, 'df-first', 'queued', 'D-1', '2026-11-24T02:00:00.000Z')).toMatchObject({
      resolved: 1,
      wake: [request().job],
    });
    const written = await store.record('a', record(1, 'D-1', { outcome: 'failed', errorCode: 'ERR_UNCERTAIN' }), {
      ledger: { bank: BANK, resubmit: false, keepClaim: true },
    });
    expect(written).toMatchObject({ kind: 'submitted', own: true, deal: { docflowId: 'df-first' }, via: 'feed' });
    expect(await storedOutcome(db, 'a', 1)).toBeUndefined();
    // The row then records that docflow: written, whatever the options of the try before.
    const own = await store.record('a', record(1, 'D-1', { docflowId: 'df-first' }), {
      ledger: { bank: BANK, resubmit: false, keepClaim: true, via: 'feed' },
    });
    expect(own).toEqual({ kind: 'written' });
    expect(await storedOutcome(db, 'a', 1)).toMatchObject({ outcome: 'queued', docflowId: 'df-first' });
  });

  it('resolves a lost answer from a feed page, counts what it does not know, and refuses a page from a follower that lost its lock', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await now();
    await feedAt(t, t);
    await ledger.claim(request());
    await ledger.settle(BANK, 'D-1', rid('D-1'), 'a', 1, 'run-1', 'uncertain');
    await redis.set(keys.feedLock, 'me');
    const item = (token: string, requestId: string, docflowId: string): NewsItem => ({
      token,
      date: '2026-11-24T01:00:00.000Z',
      docflow: { docflowId, state: 'suspended', requestId },
    });
    const page = {
      lockToken: 'me',
      after: '0',
      lastToken: '2',
      readAt: t + 1000,
      items: [item('1', rid('D-1'), 'df-9'), item('2', 'someone-else', 'df-x')],
    };
    expect(await storePage(redis, keys, db, { ...page, lockToken: 'not-me' })).toEqual({ kind: 'lost' });
    expect(await storePage(redis, keys, db, { ...page, after: '7' })).toEqual({ kind: 'moved' });
    // Neither moved anything.
    expect(await feedRow(db)).toMatchObject({ cursor: '0', items: 0 });
    expect(await entry()).toMatchObject({ state: 'sending' });
    // The first page with items sets the page size seen; as large as that, it may have been cut short.
    // The row has no outcome yet: its job is named, for the follower to wake.
    expect(await storePage(redis, keys, db, page)).toEqual({
      kind: 'stored',
      resolved: 1,
      unknown: 1,
      conflicts: [],
      complete: false,
      wake: [request().job],
      lags: [],
      duplicates: [],
      overruled: [],
    });
    expect(await entry()).toMatchObject({ state: 'submitted', docflow_id: 'df-9', outcome: 'suspended', via: 'feed' });
    expect(await docflowRow(db, 'df-9')).toMatchObject({ bank: BANK, deal_id: 'D-1', n: 0, request_id: rid('D-1'), st: 'suspended' });
    expect(await feedRow(db)).toMatchObject({ cursor: '2', covered_at: t, items: 2, resolved: 1, unknown: 1, page_max: 2 });
    // A smaller page proves nothing (a proxy may cut pages to any size): only an empty read, or a
    // page that reached the newest token a read without `after` gave (markAt), says how far the feed is complete.
    expect(
      await storePage(redis, keys, db, {
        ...page,
        after: '2',
        lastToken: '3',
        items: [item('3', 'someone-else', 'df-y')],
        readAt: t + 3000,
      }),
    ).toMatchObject({ complete: false });
    expect((await feedRow(db))!.covered_at).toBe(t);
    await storePage(redis, keys, db, {
      ...page,
      after: '3',
      lastToken: '4',
      items: [item('4', 'someone-else', 'df-z')],
      readAt: t + 4000,
      markAt: t + 3500,
    });
    expect((await feedRow(db))!.covered_at).toBe(t + 3500);
    await storePage(redis, keys, db, { ...page, after: '4', lastToken: '4', items: [], readAt: t + 5000 });
    expect((await feedRow(db))!.covered_at).toBe(t + 5000);
    expect(await ledger.claim(request())).toMatchObject({ kind: 'own', docflowId: 'df-9', via: 'feed' });
  });

  it('keeps a docflow of one of its deals that the ledger forgot (a database restored from an older copy lost the claim), for the first row that asks', async () => {
    const ledger = createLedger(redis, keys, db, options);
    const t = await now();
    await feedAt(t, t);
    // No row holds it yet: nothing to wake.
    expect(await feedShows(t, 'df-lost', 'queued', 'D-7', '2026-11-24T01:00:00.000Z')).toMatchObject({ resolved: 1, unknown: 0, wake: [] });
    expect(await ledger.read(BANK, 'D-7')).toMatchObject({ state: 'submitted', docflowId: 'df-lost', batch: '', via: 'feed' });
    expect(await ledger.claim(request({ dealId: 'D-7', batch: 'c', row: 4 }))).toMatchObject({ kind: 'own', docflowId: 'df-lost' });
    // Taken: another row now sees it as another row's.
    expect(await ledger.claim(request({ dealId: 'D-7', batch: 'd', row: 1 }))).toMatchObject({
      kind: 'elsewhere',
      deal: { docflowId: 'df-lost', batch: 'c', row: 4 },
    });
  });

  it('keeps a batch (its row, with its outcomes, and its profile in Redis) as long as its longest retention, never shorter', async ({
    profile: sample,
  }) => {
    const batches = createBatchStore(redis, keys, db);
    const store = createOutcomeStore(redis, keys, { db });
    const profile = await sample.load();
    await batches.open({ id: 'a', file: 'deals.csv', fingerprint: 'f' }, profile, HOUR);
    const before = Date.now();
    await batches.setTotal('a', 2, HOUR);
    await store.record('a', record(1, 'D-1', { docflowId: 'df-1' }));
    const first = (await batches.expiresAt('a'))!;
    expect(first).toBeGreaterThanOrEqual(before + HOUR);
    expect(first).toBeLessThanOrEqual(Date.now() + HOUR);
    expect(await redis.pttl(keys.batch('a'))).toBeGreaterThan(HOUR - 60_000);
    expect(await redis.pttl(keys.batch('a'))).toBeLessThanOrEqual(HOUR);
    // Loaded again with a longer retention: the batch, its outcomes and its profile live longer,
    // and an outcome written after it (by a worker that started before it) is kept as long.
    await batches.setTotal('a', 2, 3 * HOUR);
    await store.record('a', record(2, 'D-2', { outcome: 'failed' }));
    const longer = Date.now() + 3 * HOUR - 60_000;
    expect(await batches.expiresAt('a')).toBeGreaterThan(longer);
    expect(await redis.pttl(keys.batch('a'))).toBeGreaterThan(3 * HOUR - 60_000);
    // A shorter retention on a third load changes nothing.
    await batches.setTotal('a', 2, HOUR);
    expect(await batches.expiresAt('a')).toBeGreaterThan(longer);
    expect(await redis.pttl(keys.batch('a'))).toBeGreaterThan(3 * HOUR - 60_000);
    expect((await batches.list(10)).map((b) => b.id)).toEqual(['a']);
    expect((await storedOutcome(db, 'a', 2))?.outcome).toBe('failed');
  });
});

// Redis alone: a prefix and a client of the test's own, no database.
const inRedis = harness({ label: 'ledger-work', engine: 'none' });

describe("the batch's work the ledger keeps in Redis", () => {
  inRedis("writes a job's data only while the writer holds the job's lock", async ({ redis, keys }) => {
    const job = `${keys.bullPrefix}:deals:a.RC0x`;
    await redis.hset(job, 'data', '{"deal":"x"}');
    await redis.set(`${job}:lock`, 'the-worker-that-has-it');
    expect(await updateLockedJobData(redis, job, 'a-worker-that-lost-it', { batch: 'a', deal: 'stale' })).toBe(false);
    expect(await redis.hget(job, 'data')).toBe('{"deal":"x"}');
    expect(await updateLockedJobData(redis, job, 'the-worker-that-has-it', { batch: 'a' })).toBe(true);
    expect(await redis.hget(job, 'data')).toBe('{"batch":"a"}');
  });
});
