import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createOutcomeStore } from '../src/outcomes/store.js';
import type { LedgerEntry, OutcomeRecord } from '../src/outcomes/types.js';
import { createKeys } from '../src/queue/keys.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from './helpers/redis.js';

describe('the lookup with the checkpoint (a job\'s first run)', () => {
  const prefix = uniquePrefix('store');
  const keys = createKeys(prefix);
  let redis: Redis;
  const expiresAt = Date.now() + 3_600_000;
  const earlier: OutcomeRecord = { row: 2, dealId: 'D-2', outcome: 'failed', attempts: 3, errorCode: 'ERR', finishedAt: '2026-11-21T01:00:00.000Z' };
  const entry: LedgerEntry = { dealId: 'D-3', docflowId: 'df-3', outcome: 'queued', batch: 'other', row: 9, at: '2026-11-20T01:00:00.000Z' };

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    await redis.hset(keys.outcomes('b'), '2', JSON.stringify(earlier));
    await redis.hset(keys.ledger, 'D-3', JSON.stringify(entry));
    await redis.hset(keys.checkpoints('b'), '4', '54:35:1:4');
  });
  afterAll(async () => {
    redis.disconnect();
    await deletePrefix(prefix);
  });

  it('writes the checkpoint, with the batch\'s expiry, on a row nothing is known about', async () => {
    const store = createOutcomeStore(redis, keys, { batched: true });
    const looked = await store.lookupAndCheckpoint('b', 1, 'D-1', true, '54:35:1:1', expiresAt);
    expect(looked).toEqual({ earlier: undefined, ledger: undefined, cadastralNumber: undefined, written: true });
    expect(await redis.hget(keys.checkpoints('b'), '1')).toBe('54:35:1:1');
    expect(await redis.pexpiretime(keys.checkpoints('b'))).toBe(expiresAt);
  });

  it('writes nothing where the row has an outcome, its deal a ledger entry or the row a checkpoint, and says what it found', async () => {
    const store = createOutcomeStore(redis, keys);
    const before = await redis.hgetall(keys.checkpoints('b'));
    expect(await store.lookupAndCheckpoint('b', 2, 'D-2', true, '54:35:1:2')).toEqual({ earlier, ledger: undefined, cadastralNumber: undefined, written: false });
    expect(await store.lookupAndCheckpoint('b', 3, 'D-3', true, '54:35:1:3')).toEqual({ earlier: undefined, ledger: entry, cadastralNumber: undefined, written: false });
    expect(await store.lookupAndCheckpoint('b', 4, 'D-4', true, '54:35:9:9')).toEqual({ earlier: undefined, ledger: undefined, cadastralNumber: '54:35:1:4', written: false });
    expect(await redis.hgetall(keys.checkpoints('b'))).toEqual(before);
  });

  it('does not read the ledger for --resubmit: the checkpoint is written', async () => {
    const store = createOutcomeStore(redis, keys);
    expect(await store.lookupAndCheckpoint('b', 3, 'D-3', false, '54:35:1:3')).toEqual({ earlier: undefined, ledger: undefined, cadastralNumber: undefined, written: true });
    expect(await redis.hget(keys.checkpoints('b'), '3')).toBe('54:35:1:3');
  });
});
