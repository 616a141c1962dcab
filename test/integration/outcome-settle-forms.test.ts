/**
 * An ERR_UNCERTAIN row learns its docflow inside a script (src/ledger/lua.ts, settle_uncertain):
 * Redis' cjson decodes and re-encodes the stored outcome. Both stored forms come back whole: the
 * positional one keeps its positions (a null in the middle stays) and its finish time in ms to
 * the millisecond (cjson writes 14 significant digits: a 13-digit ms time is exact), the object
 * form of an earlier version keeps its fields.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { storePage } from '../../src/feed/feed-store.js';
import { createLedger } from '../../src/ledger/ledger.js';
import { createOutcomeStore } from '../../src/outcomes/store.js';
import { encodeOutcome } from '../../src/outcomes/outcome-codec.js';
import type { OutcomeRecord } from '../../src/outcomes/types.js';
import { createKeys, type Keys } from '../../src/redis/keys.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const BANK = '7701234567';
const DAY = 24 * 3600 * 1000;
// A dealId with a slash (cjson writes it `\/`) and Cyrillic letters; no cadastral number (a null in the middle).
const DEAL = 'ДКП/2026-7';

describe("an uncertain row's outcome settled inside Redis", () => {
  let redis: Redis;
  let prefix: string;
  let keys: Keys;

  const uncertain: OutcomeRecord = {
    row: 3,
    dealId: DEAL,
    outcome: 'failed',
    attempts: 4,
    httpStatus: 504,
    errorCode: 'ERR_UNCERTAIN',
    errorMessage: 'no answer',
    finishedAt: '2026-11-25T03:45:15.123Z',
  };

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  beforeEach(async () => {
    prefix = uniquePrefix('settle-forms');
    keys = createKeys(prefix);
    await redis.hset(
      keys.ledgerEntry(BANK, DEAL),
      'n',
      0,
      'state',
      'sending',
      'batch',
      'b',
      'row',
      3,
      'tryAt',
      Date.now() - 5000,
      'endAt',
      Date.now() - 4000,
    );
  });
  afterEach(async () => {
    await deletePrefix(prefix);
  });
  afterAll(() => {
    redis.disconnect();
  });

  const settled = {
    row: 3,
    dealId: DEAL,
    outcome: 'queued',
    docflowId: 'df-1',
    httpStatus: 200,
    attempts: 4,
    finishedAt: '2026-11-25T03:45:15.123Z',
  };

  it('positional: named by an operator, its finish time to the ms and its positions kept', async () => {
    await redis.hset(keys.outcomes('b'), '3', encodeOutcome(uncertain));
    const ledger = createLedger(redis, keys, { timeoutMs: 1000, feedLagMs: 1000, ledgerMs: DAY });
    expect(await ledger.resolve(BANK, DEAL, { docflowId: 'df-1', outcome: 'queued' })).toBe('resolved');
    const [record] = await createOutcomeStore(redis, keys).range('b', 3, 3);
    expect(record).toMatchObject(settled);
    expect(record!.errorCode).toBeUndefined();
    expect(record!.cadastralNumber).toBeUndefined();
    expect(record!.errorMessage).toMatch(/named by an operator/);
  });

  it('positional: found in the news feed', async () => {
    await redis.hset(keys.outcomes('b'), '3', encodeOutcome(uncertain));
    await redis.hset(keys.feed, 'since', Date.now() - 60_000, 'cursor', '0', 'coveredAt', Date.now() - 60_000);
    await redis.set(keys.feedLock, 'me', 'PX', 60_000);
    const stored = await storePage(redis, keys, {
      lockToken: 'me',
      after: '0',
      lastToken: '1',
      readAt: Date.now(),
      ledgerMs: DAY,
      items: [
        {
          token: '1',
          date: '2026-11-25T03:46:00.000Z',
          docflow: { docflowId: 'df-1', docflowType: 'encumbrance_request', state: 'queued', requestId: `${BANK}:0:${DEAL}` },
        },
      ],
    });
    expect(stored).toMatchObject({ kind: 'stored', resolved: 1 });
    const [record] = await createOutcomeStore(redis, keys).range('b', 3, 3);
    expect(record).toMatchObject(settled);
    expect(record!.errorMessage).toMatch(/found in the news feed/);
  });

  it("an earlier version's object form", async () => {
    await redis.hset(keys.outcomes('b'), '3', JSON.stringify(uncertain));
    const ledger = createLedger(redis, keys, { timeoutMs: 1000, feedLagMs: 1000, ledgerMs: DAY });
    expect(await ledger.resolve(BANK, DEAL, { docflowId: 'df-1', outcome: 'queued' })).toBe('resolved');
    const [record] = await createOutcomeStore(redis, keys).range('b', 3, 3);
    expect(record).toMatchObject(settled);
    expect(record!.errorCode).toBeUndefined();
  });
});
