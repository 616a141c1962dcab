/**
 * The follower's store of a page, on the real Redis: every item of a docflow of ours moves
 * its state (in the feed's order), others' docflows are counted and ignored, and the
 * per-state gauge follows; a docflow's state moves into its deal's ledger entry, keeping when its
 * requirement began; a page whose texts hold half a character is still stored. The end-to-end
 * life against the sandbox is in deal-life.test.ts.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { storePage, readFeedState } from '../../src/feed/feed-store.js';
import { registryErrorOf } from '../../src/feed/item-status.js';
import { docflowStateCounts, readDocflowStatuses } from '../../src/ledger/docflows.js';
import { createLedger } from '../../src/ledger/ledger.js';
import { createKeys, type Keys } from '../../src/redis/keys.js';
import type { NewsItem } from '../../src/realty/types.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const BANK = '7701234567';
const DAY = 24 * 3600 * 1000;
const PAYMENT = { payment: [{ uin: '188100', amount: 2000, payer: { organization: { name: 'ООО Ромашка' } } }] };

describe('following docflow states from the news feed', () => {
  let redis: Redis;
  let prefix: string;
  let keys: Keys;
  let cursor = 0;

  const item = (docflowId: string, state: string, extra: Partial<NewsItem['docflow']> = {}, dealId = 'D-1'): NewsItem => ({
    token: String(++cursor),
    date: new Date(Date.UTC(2026, 10, 24, 21, 0, cursor)).toISOString(),
    docflow: { docflowId, docflowType: 'encumbrance_request', state, requestId: `${BANK}:0:${dealId}`, ...extra },
  });
  /** The docflow of a deal of BANK, as a reader names it. */
  const of = (docflowId: string, dealId = 'D-1') => ({ bank: BANK, dealId, docflowId });
  const store = (items: NewsItem[]) =>
    storePage(redis, keys, {
      lockToken: 'me',
      after: String(cursor - items.length),
      lastToken: String(cursor),
      readAt: Date.now(),
      items,
      ledgerMs: DAY,
    });

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  beforeEach(async () => {
    prefix = uniquePrefix('feed-states');
    keys = createKeys(prefix);
    cursor = 0;
    await redis.hset(keys.feed, 'since', Date.now() - 60_000, 'cursor', '0', 'coveredAt', Date.now() - 60_000);
    await redis.set(keys.feedLock, 'me', 'PX', 60_000);
    // D-1 made its docflow d-1, the gateway's answer said so (an entry as an earlier version wrote it, with its rid).
    await redis.hset(
      keys.ledgerEntry(BANK, 'D-1'),
      'n',
      0,
      'rid',
      `${BANK}:0:D-1`,
      'state',
      'submitted',
      'docflowId',
      'd-1',
      'outcome',
      'queued',
      'batch',
      'b',
      'row',
      1,
    );
  });
  afterEach(async () => {
    await deletePrefix(prefix);
  });
  afterAll(() => {
    redis.disconnect();
  });

  it('moves a docflow of ours through its states, in the feed order, with the gauge', async () => {
    const first = await store([item('d-1', 'queued'), item('d-1', 'sent')]);
    expect(first).toMatchObject({ kind: 'stored', unknown: 0 });
    let [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toMatchObject({ state: 'sent' });
    expect(await docflowStateCounts(redis, keys)).toMatchObject({ queued: 0, sent: 1 });

    const payment = { payment: [{ uin: '188100', amount: 2000, payer: { lastName: 'Семёнов', firstName: 'Андрей' } }] };
    await store([item('d-1', 'suspended', { requirements: payment })]);
    [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
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
    await store([done]);
    [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toEqual({ state: 'completed', stateAt: done.date, resultFiles: 2 });
    expect(await docflowStateCounts(redis, keys)).toMatchObject({ queued: 0, sent: 0, suspended: 0, completed: 1 });
    expect((await readFeedState(redis, keys)).followed).toBe(4);
    // Nothing personal is kept: the payer was initials, and is gone with the requirement.
    expect(JSON.stringify(await redis.hgetall(keys.ledgerEntry(BANK, 'D-1')))).not.toMatch(/Семёнов|Андрей/);
    // The state lives in the deal's ledger entry: no key of its own (about 200 bytes a docflow).
    expect(await redis.exists(keys.docflow('d-1'))).toBe(0);
    expect(await redis.hmget(keys.ledgerEntry(BANK, 'D-1'), 'st', 'sat', 'docflowId', 'at')).toEqual(['completed', done.date, 'd-1', null]);
  });

  it('counts and ignores docflows that are not ours, and never follows them', async () => {
    const stored = await store([
      item('x-1', 'queued', { requestId: 'erp-1' }),
      item('x-2', 'sent', { requestId: undefined }),
      // Our bank's requestId format, a deal this fleet never had: the ledger learns of it (another fleet).
      item('x-3', 'queued', {}, 'D-OTHER'),
    ]);
    expect(stored).toMatchObject({ kind: 'stored', unknown: 2, resolved: 1 });
    const statuses = await readDocflowStatuses(redis, keys, [of('x-1'), of('x-2'), of('x-3', 'D-OTHER')]);
    expect(statuses.map((s) => s?.state)).toEqual([undefined, undefined, 'queued']);
  });

  it('a lost answer found in the feed is followed from its first item on', async () => {
    await redis.hset(keys.ledgerEntry(BANK, 'D-2'), 'n', 0, 'state', 'sending', 'batch', 'b', 'row', 2, 'tryAt', Date.now());
    const stored = await store([
      item('d-2', 'sent', {}, 'D-2'),
      item('d-2', 'error', { error: { code: 'refused', message: 'ИВАНОВ ИВАН не собственник' } }, 'D-2'),
    ]);
    expect(stored).toMatchObject({ kind: 'stored', resolved: 1 });
    expect(await redis.hget(keys.ledgerEntry(BANK, 'D-2'), 'docflowId')).toBe('d-2');
    const [status] = await readDocflowStatuses(redis, keys, [of('d-2', 'D-2')]);
    expect(status).toMatchObject({ state: 'error', registryError: 'refused: *** не собственник' });
  });

  it('a follower that lost its lock stores nothing', async () => {
    await redis.set(keys.feedLock, 'someone-else');
    expect(await store([item('d-1', 'sent')])).toEqual({ kind: 'lost' });
    expect(await readDocflowStatuses(redis, keys, [of('d-1')])).toEqual([undefined]);
  });

  it('a docflow an earlier version followed in a hash of its own moves into its entry at its next item', async () => {
    await redis.hset(keys.docflow('d-1'), 'st', 'sent', 'at', '2026-11-20T10:00:00.000Z', 'rid', `${BANK}:0:D-1`);
    await redis.hset(keys.docflowStates, 'sent', 1);
    const [before] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(before).toEqual({ state: 'sent', stateAt: '2026-11-20T10:00:00.000Z' });

    const done = item('d-1', 'completed');
    expect(await store([done])).toMatchObject({ kind: 'stored', unknown: 0 });
    expect(await redis.exists(keys.docflow('d-1'))).toBe(0);
    expect(await redis.hmget(keys.ledgerEntry(BANK, 'D-1'), 'st', 'sat')).toEqual(['completed', done.date]);
    expect(await docflowStateCounts(redis, keys)).toMatchObject({ sent: 0, completed: 1 });
  });

  it("a resubmission keeps the docflow it replaces followed, in that docflow's own hash", async () => {
    // The registry refused d-1: the deal may be sent again (--resubmit).
    await store([item('d-1', 'error', { error: { code: 'refused', message: 'отказ' } })]);
    const ledger = createLedger(redis, keys, { timeoutMs: 1000, feedLagMs: 1000, ledgerMs: DAY });
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
    expect(verdict).toEqual({ kind: 'send', requestId: `${BANK}:1:D-1` });
    // The entry is the new try's; the replaced docflow's state went to its own hash.
    expect(await redis.hget(keys.ledgerEntry(BANK, 'D-1'), 'st')).toBeNull();
    expect(await redis.hget(keys.docflow('d-1'), 'st')).toBe('error');

    const done = item('d-1', 'completed');
    const made = item('d-9', 'queued', { requestId: `${BANK}:1:D-1` });
    expect(await store([done, made])).toMatchObject({ kind: 'stored', unknown: 0, resolved: 1 });
    const statuses = await readDocflowStatuses(redis, keys, [of('d-1'), of('d-9')]);
    expect(statuses).toEqual([
      { state: 'completed', stateAt: done.date },
      { state: 'queued', stateAt: made.date },
    ]);
    expect(await redis.hmget(keys.ledgerEntry(BANK, 'D-1'), 'docflowId', 'st', 'rid')).toEqual(['d-9', 'queued', null]);
    expect(await docflowStateCounts(redis, keys)).toMatchObject({ error: 0, completed: 1, queued: 1 });
  });

  it("a payment requirement an earlier version's hash kept keeps its start when the docflow moves into its entry", async () => {
    await redis.hset(
      keys.docflow('d-1'),
      'st',
      'suspended',
      'at',
      '2026-11-20T10:00:00.000Z',
      'req',
      'payment',
      'reqAt',
      '2026-11-20T10:00:00.000Z',
      'uin',
      '188100',
    );
    // The same requirement again (the feed repeats a suspended docflow's state): it began on the 20th.
    await store([item('d-1', 'suspended', { requirements: PAYMENT })]);
    const [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirement: 'payment', requirementAt: '2026-11-20T10:00:00.000Z' });
  });

  it('a --resubmit row leaves a docflow that waits for a payment as it stands, its requirement still dated from its start', async () => {
    const first = item('d-1', 'suspended', { requirements: PAYMENT });
    await store([first]);
    const ledger = createLedger(redis, keys, { timeoutMs: 1000, feedLagMs: 1000, ledgerMs: DAY });
    const claim = { bank: BANK, dealId: 'D-1', job: `${prefix}:job`, mode: 'send' as const };
    // Only a docflow the registry refused is sent again: this one waits for the bank's payment.
    expect(await ledger.claim({ ...claim, batch: 'b2', row: 1, resubmit: true, nonce: 'run-1' })).toMatchObject({
      kind: 'elsewhere',
      stands: 'suspended',
      deal: { docflowId: 'd-1' },
    });
    expect(await ledger.claim({ ...claim, batch: 'b3', row: 1, resubmit: false, nonce: 'run-2' })).toMatchObject({ kind: 'elsewhere' });
    let [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirementAt: first.date });

    await store([item('d-1', 'suspended', { requirements: PAYMENT })]);
    [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirement: 'payment', requirementAt: first.date });
    // Never parked: one docflow in the gauge, in its entry.
    expect(await redis.exists(keys.docflow('d-1'))).toBe(0);
    expect(await docflowStateCounts(redis, keys)).toMatchObject({ suspended: 1 });
  });

  it('keeps 500 characters of a registry error, never cutting one in half', () => {
    const error = { code: 'e', message: `${'x'.repeat(500 - 'e: '.length - 1)}😀 more` };
    // 500 UTF-16 units would end half-way through the emoji.
    expect(registryErrorOf(error)).toBe(`e: ${'x'.repeat(500 - 'e: '.length - 1)}`);
  });

  it('stores a page whose texts hold a lone surrogate (cjson refuses its escape), as U+FFFD', async () => {
    const suspended = item('d-1', 'suspended', { requirements: { payment: [{ uin: '188\ud83d', amount: 2000 }] } });
    const stored = await store([suspended]);
    expect(stored).toMatchObject({ kind: 'stored', unknown: 0 });
    const [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirement: 'payment', paymentUin: '188\ufffd' });
  });
});
