/**
 * The follower's store of a page, on the real Redis (its lock) and each engine of the database
 * (the storage contract): every item of a docflow of ours moves its state (in the feed's order)
 * in the docflow's row and its history, others' docflows are counted and ignored, and the
 * per-state gauge follows; a page read after a cursor that moved on is refused whole; a lost
 * answer is found; a requirement keeps the date it began; a page whose texts hold half a
 * character is still stored. The end-to-end life against the sandbox is in deal-life.test.ts.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { readFeedState, storePage } from '../../../src/feed/feed-store.js';
import { registryErrorOf } from '../../../src/feed/item-status.js';
import { docflowStateCounts, readDocflowStatuses } from '../../../src/ledger/docflows.js';
import { requestIdOf } from '../../../src/ledger/entry.js';
import { createLedger } from '../../../src/ledger/ledger.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { NewsItem } from '../../../src/domain/gateway.js';
import { docflowRow, feedRow, ledgerRow, putDocflowRow, putLedgerRow } from '../../helpers/ledger-rows.js';
import { harness } from '../../helpers/harness.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const BANK = '7701234567';
const PAYMENT = { payment: [{ uin: '188100', amount: 2000, payer: { organization: { name: 'ООО Ромашка' } } }] };

describe('a registry error kept for the bank', () => {
  it('keeps 500 characters of a registry error, never cutting one in half', () => {
    const error = { code: 'e', message: `${'x'.repeat(500 - 'e: '.length - 1)}😀 more` };
    // 500 UTF-16 units would end half-way through the emoji.
    expect(registryErrorOf(error)).toBe(`e: ${'x'.repeat(500 - 'e: '.length - 1)}`);
  });
});

// The client once for an engine's tests (a file's fixtures are made at the top level); a prefix and database of each test's own.
const onEngine = {
  sqlite: harness({ per: 'file', each: ['prefix', 'db'], label: 'feed-states', engine: 'sqlite' }),
  postgres: harness({ per: 'file', each: ['prefix', 'db'], label: 'feed-states', engine: 'postgres' }),
};

describe.each(['sqlite', 'postgres'] as const)('following docflow states from the news feed (%s)', (engine) => {
  const it = onEngine[engine];
  let store: UsedDatabase;
  let redis: Redis;
  let prefix: string;
  let keys: Keys;
  let cursor = 0;

  const item = (docflowId: string, state: string, extra: Partial<NewsItem['docflow']> = {}, dealId = 'D-1'): NewsItem => ({
    token: String(++cursor),
    date: new Date(Date.UTC(2026, 10, 24, 21, 0, cursor)).toISOString(),
    docflow: { docflowId, docflowType: 'encumbrance_request', state, requestId: requestIdOf(BANK, dealId), ...extra },
  });
  /** The docflow of a deal of BANK, as a reader names it. */
  const of = (docflowId: string, dealId = 'D-1') => ({ bank: BANK, dealId, docflowId });
  /** A page of items read after the cursor the feed has (the items just made). */
  const page = (items: NewsItem[]) => ({
    lockToken: 'me',
    after: String(cursor - items.length),
    lastToken: String(cursor),
    readAt: Date.now(),
    items,
  });
  const put = (items: NewsItem[]) => storePage(redis, keys, store.db, page(items));
  /** A deal of BANK whose try 0 was claimed and sent by row `row` of batch b, its answer not come. */
  const putTryInFlight = async (dealId: string, row: number, job: string) =>
    putLedgerRow(store.db, {
      bank: BANK,
      deal_id: dealId,
      n: 0,
      state: 'sending',
      batch: 'b',
      row,
      job,
      try_at: await store.db.now(),
      timeout_ms: 1000,
      lag_ms: 1000,
      nonce: 'run-1',
    });
  const history = (docflowId: string) =>
    store.db.kysely.selectFrom('docflow_history').select(['st', 'sat']).where('docflow_id', '=', docflowId).orderBy('sat').execute();

  it.beforeEach(async ({ redis: client, prefix: made, keys: madeKeys, db }) => {
    redis = client;
    prefix = made;
    keys = madeKeys;
    store = db;
    cursor = 0;
    const since = (await store.db.now()) - 60_000;
    await store.db.kysely
      .insertInto('feed')
      .values({ id: 1, cursor: '0', since, covered_at: since, page_max: 0, items: 0, resolved: 0, unknown: 0, conflicts: 0, followed: 0 })
      .execute();
    await redis.set(keys.feedLock, 'me', 'PX', 60_000);
    // D-1 made its docflow d-1, the gateway's answer said so.
    await putLedgerRow(store.db, {
      bank: BANK,
      deal_id: 'D-1',
      n: 0,
      state: 'submitted',
      docflow_id: 'd-1',
      outcome: 'queued',
      at: '2026-11-24T20:59:00.000Z',
      via: 'answer',
      batch: 'b',
      row: 1,
    });
  });

  it('moves a docflow of ours through its states, in the feed order, with the gauge', async () => {
    const first = await put([item('d-1', 'queued'), item('d-1', 'sent')]);
    expect(first).toMatchObject({ kind: 'stored', unknown: 0, resolved: 0, conflicts: [], wake: [] });
    let [status] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(status).toMatchObject({ state: 'sent' });
    expect(await docflowStateCounts(store.db)).toMatchObject({ queued: 0, sent: 1 });

    const payment = { payment: [{ uin: '188100', amount: 2000, payer: { lastName: 'Семёнов', firstName: 'Андрей' } }] };
    await put([item('d-1', 'suspended', { requirements: payment })]);
    [status] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(status).toMatchObject({
      state: 'suspended',
      requirement: 'payment',
      paymentUin: '188100',
      paymentAmount: '2000',
      payer: 'С. А.',
    });
    const since = status!.requirementAt;
    expect(since).toBe(status!.stateAt);

    const done = item('d-1', 'completed', { result: { files: [{ id: 'r1' }, { id: 'r2' }] } });
    await put([done]);
    [status] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(status).toEqual({ state: 'completed', stateAt: done.date, resultFiles: 2 });
    expect(await docflowStateCounts(store.db)).toMatchObject({ queued: 0, sent: 0, suspended: 0, completed: 1 });
    expect(await readFeedState(store.db)).toMatchObject({ followed: 4, items: 4, cursor: String(cursor) });
    // The state lives in the docflow's row, named by its deal and try; the deal's ledger row is as the answer left it.
    expect(await docflowRow(store.db, 'd-1')).toMatchObject({
      bank: BANK,
      deal_id: 'D-1',
      n: 0,
      request_id: requestIdOf(BANK, 'D-1'),
      st: 'completed',
      sat: done.date,
      req: null,
      req_at: null,
      payer: null,
      files: '2',
    });
    expect(await ledgerRow(store.db, BANK, 'D-1')).toMatchObject({
      state: 'submitted',
      docflow_id: 'd-1',
      via: 'answer',
      at: '2026-11-24T20:59:00.000Z',
    });
    // Each state it was seen in, once.
    expect((await history('d-1')).map((h) => h.st)).toEqual(['queued', 'sent', 'suspended', 'completed']);
    // Nothing personal is kept: the payer was initials, and is gone with the requirement.
    const kept = JSON.stringify([await docflowRow(store.db, 'd-1'), await ledgerRow(store.db, BANK, 'D-1'), await history('d-1')]);
    expect(kept).not.toMatch(/Семёнов|Андрей/);
  });

  it('counts and ignores docflows that are not ours, and never follows them', async () => {
    const stored = await put([
      item('x-1', 'queued', { requestId: 'erp-1' }),
      item('x-2', 'sent', { requestId: undefined }),
      // Our bank's requestId format, a deal this fleet never had: the ledger learns of it (another fleet).
      item('x-3', 'queued', {}, 'D-OTHER'),
    ]);
    expect(stored).toMatchObject({ kind: 'stored', unknown: 2, resolved: 1 });
    const statuses = await readDocflowStatuses(store.db, [of('x-1'), of('x-2'), of('x-3', 'D-OTHER')]);
    expect(statuses.map((s) => s?.state)).toEqual([undefined, undefined, 'queued']);
    expect(await docflowRow(store.db, 'x-1')).toBeUndefined();
    expect(await docflowRow(store.db, 'x-2')).toBeUndefined();
    // No row holds it: the first row that claims the deal takes it as its own.
    expect(await ledgerRow(store.db, BANK, 'D-OTHER')).toMatchObject({
      state: 'submitted',
      docflow_id: 'x-3',
      via: 'feed',
      batch: '',
      row: 0,
    });
    expect(await readFeedState(store.db)).toMatchObject({ items: 3, unknown: 2, resolved: 1, followed: 1 });
  });

  it('a lost answer found in the feed is followed from its first item on, and its row woken', async () => {
    const job = `${prefix}:job-2`;
    await putTryInFlight('D-2', 2, job);
    const stored = await put([
      item('d-2', 'sent', {}, 'D-2'),
      item('d-2', 'error', { error: { code: 'refused', message: 'ИВАНОВ ИВАН не собственник' } }, 'D-2'),
    ]);
    // Its row has no outcome yet: its job sleeps until its try's end plus the feed lag, woken now.
    expect(stored).toMatchObject({ kind: 'stored', resolved: 1, unknown: 0, wake: [job] });
    expect(await ledgerRow(store.db, BANK, 'D-2')).toMatchObject({
      state: 'submitted',
      docflow_id: 'd-2',
      outcome: 'queued',
      via: 'feed',
      job: null,
      try_at: null,
      end_at: null,
      nonce: null,
    });
    const [status] = await readDocflowStatuses(store.db, [of('d-2', 'D-2')]);
    expect(status).toMatchObject({ state: 'error', registryError: 'refused: *** не собственник' });
    expect((await history('d-2')).map((h) => h.st)).toEqual(['sent', 'error']);
    expect(await readFeedState(store.db)).toMatchObject({ resolved: 1, followed: 2 });
  });

  it('a page that mixes common items with a lost answer and a second docflow for one requestId decides each as it would alone', async () => {
    // D-3 made d-3 (its answer said so) and waits for a payment since the 20th.
    await putLedgerRow(store.db, {
      bank: BANK,
      deal_id: 'D-3',
      n: 0,
      state: 'submitted',
      docflow_id: 'd-3',
      outcome: 'queued',
      via: 'answer',
      batch: 'b',
      row: 3,
    });
    await putDocflowRow(store.db, {
      docflow_id: 'd-3',
      bank: BANK,
      deal_id: 'D-3',
      request_id: requestIdOf(BANK, 'D-3'),
      st: 'suspended',
      sat: '2026-11-20T10:00:00.000Z',
      req: 'payment',
      req_at: '2026-11-20T10:00:00.000Z',
      uin: '188100',
    });
    // D-2's answer was lost: its try is in flight.
    await putTryInFlight('D-2', 2, `${prefix}:job-2`);
    const stored = await put([
      item('d-1', 'queued'),
      item('d-3', 'suspended', { requirements: PAYMENT }, 'D-3'),
      item('d-2', 'queued', {}, 'D-2'),
      // A second docflow for D-3's requestId: the gateway made two for one try.
      item('d-3b', 'queued', {}, 'D-3'),
      item('d-1', 'sent'),
      item('d-3', 'suspended', { requirements: PAYMENT }, 'D-3'),
      item('d-2', 'sent', {}, 'D-2'),
    ]);
    expect(stored).toMatchObject({ kind: 'stored', resolved: 1, unknown: 0, conflicts: [`${requestIdOf(BANK, 'D-3')} d-3 d-3b`] });
    const statuses = await readDocflowStatuses(store.db, [of('d-1'), of('d-2', 'D-2'), of('d-3', 'D-3'), of('d-3b', 'D-3')]);
    expect(statuses).toEqual([
      expect.objectContaining({ state: 'sent' }),
      expect.objectContaining({ state: 'sent' }),
      // Its requirement still dated from the 20th, on the item before the conflict and after it.
      expect.objectContaining({ state: 'suspended', requirement: 'payment', requirementAt: '2026-11-20T10:00:00.000Z' }),
      expect.objectContaining({ state: 'queued' }),
    ]);
    expect(await ledgerRow(store.db, BANK, 'D-2')).toMatchObject({ state: 'submitted', docflow_id: 'd-2', via: 'feed' });
    expect(await ledgerRow(store.db, BANK, 'D-3')).toMatchObject({ state: 'submitted', docflow_id: 'd-3' });
    expect((await history('d-1')).map((h) => h.st)).toEqual(['queued', 'sent']);
    expect((await history('d-2')).map((h) => h.st)).toEqual(['queued', 'sent']);
    expect(await readFeedState(store.db)).toMatchObject({ resolved: 1, conflicts: 1, followed: 7 });
  });
  it('a follower that lost its lock stores nothing', async () => {
    await redis.set(keys.feedLock, 'someone-else');
    expect(await put([item('d-1', 'sent')])).toEqual({ kind: 'lost' });
    expect(await readDocflowStatuses(store.db, [of('d-1')])).toEqual([undefined]);
    expect(await feedRow(store.db)).toMatchObject({ cursor: '0', items: 0, followed: 0 });
  });

  it('a page read after a cursor that moved on is refused whole: moved, and nothing of it stored', async () => {
    // Two followers read after cursor 0 (one paused past its lock's end, then came back holding it again).
    const sent = item('d-1', 'sent');
    const mine = page([sent]);
    expect(await storePage(redis, keys, store.db, mine)).toMatchObject({ kind: 'stored' });
    const before = await feedRow(store.db);
    expect(before).toMatchObject({ cursor: mine.lastToken, items: 1, followed: 1 });
    // The same page, and one read after the same cursor with another state: the cursor is no longer theirs.
    expect(await storePage(redis, keys, store.db, mine)).toEqual({ kind: 'moved' });
    const late = {
      ...mine,
      items: [{ ...sent, docflow: { ...sent.docflow, state: 'queued' } }, item('d-2', 'queued', {}, 'D-2')],
      lastToken: '99',
    };
    expect(await storePage(redis, keys, store.db, late)).toEqual({ kind: 'moved' });
    expect(await feedRow(store.db)).toEqual(before);
    expect(await readDocflowStatuses(store.db, [of('d-1'), of('d-2', 'D-2')])).toEqual([{ state: 'sent', stateAt: sent.date }, undefined]);
    expect(await ledgerRow(store.db, BANK, 'D-2')).toBeUndefined();
    // The next page, read after the cursor as it is, is stored.
    const next = { ...page([item('d-1', 'completed')]), after: mine.lastToken };
    expect(await storePage(redis, keys, store.db, next)).toMatchObject({ kind: 'stored' });
    expect(await readFeedState(store.db)).toMatchObject({ cursor: next.lastToken, items: 2, followed: 2 });
  });

  it('keeps the docflow a resubmission replaces followed, in its own row', async () => {
    // The registry refused d-1: the deal may be sent again (--resubmit).
    await put([item('d-1', 'error', { error: { code: 'refused', message: 'отказ' } })]);
    // Read to its end (an empty page): a try is claimed only while the feed is known complete.
    await put([]);
    const ledger = createLedger(redis, keys, store.db, { timeoutMs: 1000, feedLagMs: 1000 });
    const verdict = await ledger.claim({
      bank: BANK,
      dealId: 'D-1',
      batch: 'b2',
      row: 1,
      job: `${prefix}:job`,
      resubmit: true,
      mode: 'send',
      nonce: 'run-1',
    });
    expect(verdict).toEqual({ kind: 'send', requestId: `${BANK}:reg:1:D-1` });
    // The deal's ledger row is the new try's; the replaced docflow keeps its row and its state.
    expect(await ledgerRow(store.db, BANK, 'D-1')).toMatchObject({ n: 1, state: 'sending', docflow_id: null, batch: 'b2' });
    expect(await docflowRow(store.db, 'd-1')).toMatchObject({ n: 0, st: 'error' });

    const done = item('d-1', 'completed');
    const made = item('d-9', 'queued', { requestId: requestIdOf(BANK, 'D-1', 1) });
    expect(await put([done, made])).toMatchObject({ kind: 'stored', unknown: 0, resolved: 1 });
    const statuses = await readDocflowStatuses(store.db, [of('d-1'), of('d-9')]);
    expect(statuses).toEqual([
      { state: 'completed', stateAt: done.date },
      { state: 'queued', stateAt: made.date },
    ]);
    expect(await ledgerRow(store.db, BANK, 'D-1')).toMatchObject({ n: 1, state: 'submitted', docflow_id: 'd-9', via: 'feed', prev: null });
    expect(await docflowRow(store.db, 'd-1')).toMatchObject({ n: 0, request_id: requestIdOf(BANK, 'D-1', 0), st: 'completed' });
    expect(await docflowRow(store.db, 'd-9')).toMatchObject({ n: 1, request_id: requestIdOf(BANK, 'D-1', 1), st: 'queued' });
    expect(await docflowStateCounts(store.db)).toMatchObject({ error: 0, completed: 1, queued: 1 });
  });

  it('a payment requirement keeps the date it began when the feed shows it again', async () => {
    // Followed since the 20th, waiting for a payment since then.
    await putDocflowRow(store.db, {
      docflow_id: 'd-1',
      bank: BANK,
      deal_id: 'D-1',
      request_id: requestIdOf(BANK, 'D-1'),
      st: 'suspended',
      sat: '2026-11-20T10:00:00.000Z',
      req: 'payment',
      req_at: '2026-11-20T10:00:00.000Z',
      uin: '188100',
    });
    // The same requirement again (the feed repeats a suspended docflow's state): it began on the 20th.
    const again = item('d-1', 'suspended', { requirements: PAYMENT });
    await put([again]);
    const [status] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(status).toMatchObject({
      state: 'suspended',
      stateAt: again.date,
      requirement: 'payment',
      requirementAt: '2026-11-20T10:00:00.000Z',
    });
    // Another requirement starts a date of its own.
    const sign = item('d-1', 'suspended', { requirements: { signature: [{ files: [{ id: 's1' }] }] } });
    await put([sign]);
    const [signing] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(signing).toMatchObject({ requirement: 'signature', requirementAt: sign.date });
  });

  it('a --resubmit row leaves a docflow that waits for a payment as it stands, its requirement still dated from its start', async () => {
    const first = item('d-1', 'suspended', { requirements: PAYMENT });
    await put([first]);
    const ledger = createLedger(redis, keys, store.db, { timeoutMs: 1000, feedLagMs: 1000 });
    const claim = { bank: BANK, dealId: 'D-1', job: `${prefix}:job`, mode: 'send' as const };
    // Only a docflow the registry refused is sent again: this one waits for the bank's payment.
    expect(await ledger.claim({ ...claim, batch: 'b2', row: 1, resubmit: true, nonce: 'run-1' })).toMatchObject({
      kind: 'elsewhere',
      stands: 'suspended',
      deal: { docflowId: 'd-1' },
    });
    expect(await ledger.claim({ ...claim, batch: 'b3', row: 1, resubmit: false, nonce: 'run-2' })).toMatchObject({ kind: 'elsewhere' });
    let [status] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirementAt: first.date });

    await put([item('d-1', 'suspended', { requirements: PAYMENT })]);
    [status] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirement: 'payment', requirementAt: first.date });
    // The deal's row still names its docflow, untouched: one docflow in the gauge.
    expect(await ledgerRow(store.db, BANK, 'D-1')).toMatchObject({
      n: 0,
      state: 'submitted',
      docflow_id: 'd-1',
      batch: 'b',
      row: 1,
      prev: null,
    });
    expect(await docflowStateCounts(store.db)).toMatchObject({ suspended: 1 });
  });

  it('stores a page whose texts hold a lone surrogate (half an emoji), as U+FFFD on either engine', async () => {
    // PostgreSQL's driver sends the text as UTF-8 (U+FFFD for the half character); SQLite's would
    // write the surrogate's own three bytes, which are no UTF-8, and read them back as three U+FFFD.
    const suspended = item('d-1', 'suspended', { requirements: { payment: [{ uin: '188\ud83d', amount: 2000 }] } });
    const stored = await put([suspended]);
    expect(stored).toMatchObject({ kind: 'stored', unknown: 0 });
    const [status] = await readDocflowStatuses(store.db, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirement: 'payment', paymentUin: '188\ufffd' });
  });
});
