/**
 * Edges of a docflow's state as the feed's page store keeps it (src/feed/feed-store.ts) since it
 * moved into the deal's ledger entry: a requirement's start survives the move from a docflow's own
 * hash, and a page whose texts hold half a character is still stored.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { storePage } from '../../src/feed/feed-store.js';
import { registryErrorOf } from '../../src/feed/item-status.js';
import { docflowStateCounts, readDocflowStatuses } from '../../src/ledger/docflows.js';
import { createLedger } from '../../src/ledger/ledger.js';
import { createKeys, type Keys } from '../../src/redis/keys.js';
import type { NewsItem } from '../../src/realty/types.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const BANK = '7701234567';
const DAY = 24 * 3600 * 1000;
const PAYMENT = { payment: [{ uin: '188100', amount: 2000, payer: { organization: { name: 'ООО Ромашка' } } }] };

describe('a docflow state in its ledger entry: edges', () => {
  let redis: Redis;
  let prefix: string;
  let keys: Keys;
  let cursor = 0;

  const item = (docflowId: string, state: string, extra: Partial<NewsItem['docflow']> = {}): NewsItem => ({
    token: String(++cursor),
    date: new Date(Date.UTC(2026, 10, 24, 21, 0, cursor)).toISOString(),
    docflow: { docflowId, docflowType: 'encumbrance_request', state, requestId: `${BANK}:0:D-1`, ...extra },
  });
  const of = (docflowId: string) => ({ bank: BANK, dealId: 'D-1', docflowId });
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
    prefix = uniquePrefix('feed-state-edges');
    keys = createKeys(prefix);
    cursor = 0;
    await redis.hset(keys.feed, 'since', Date.now() - 60_000, 'cursor', '0', 'coveredAt', Date.now() - 60_000);
    await redis.set(keys.feedLock, 'me', 'PX', 60_000);
    await redis.hset(
      keys.ledgerEntry(BANK, 'D-1'),
      'n',
      0,
      'state',
      'submitted',
      'docflowId',
      'd-1',
      'outcome',
      'queued',
      'at',
      '2026-11-19T10:00:00.000Z',
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

  it('a resubmission that made nothing gives the deal back its docflow with its requirement still dated from its start', async () => {
    const first = item('d-1', 'suspended', { requirements: PAYMENT });
    await store([first]);
    const ledger = createLedger(redis, keys, { timeoutMs: 1000, feedLagMs: 1000, ledgerMs: DAY });
    const claim = { bank: BANK, dealId: 'D-1', job: `${prefix}:job`, mode: 'send' as const };
    expect(await ledger.claim({ ...claim, batch: 'b2', row: 1, resubmit: true, nonce: 'run-1' })).toEqual({
      kind: 'send',
      requestId: `${BANK}:1:D-1`,
    });
    // The gateway refused it outright: nothing was made. A row that does not resubmit gives the deal its docflow back.
    await ledger.settle(BANK, 'D-1', `${BANK}:1:D-1`, 'b2', 1, 'run-1', 'definite');
    expect(await ledger.claim({ ...claim, batch: 'b3', row: 1, resubmit: false, nonce: 'run-2' })).toMatchObject({ kind: 'elsewhere' });
    let [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirementAt: first.date });

    await store([item('d-1', 'suspended', { requirements: PAYMENT })]);
    [status] = await readDocflowStatuses(redis, keys, [of('d-1')]);
    expect(status).toMatchObject({ state: 'suspended', requirement: 'payment', requirementAt: first.date });
    // Parked, given back and moved into its entry: still one docflow in the gauge.
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
