/** The token lock on real Redis: one holder at a time, and only its holder renews or lets it go. */
import { describe, expect } from 'vitest';
import { tokenLock } from '../../../src/redis/token-lock.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

const it = harness({ per: 'file', label: 'token-lock' });

describe('tokenLock', () => {
  it('is taken by one token at a time, renewed and let go only by it', async ({ redis, prefix }) => {
    const key = `${prefix}:lock`;
    const a = tokenLock(redis, key, 60_000);
    const b = tokenLock(redis, key, 60_000);
    expect(a.token).not.toBe(b.token);
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);
    // B neither renews nor deletes A's lock.
    expect(await b.renew()).toBe(false);
    await b.release();
    expect(await redis.get(key)).toBe(a.token);
    expect(await a.renew()).toBe(true);
    expect(await redis.pttl(key)).toBeGreaterThan(50_000);
    await a.release();
    expect(await redis.exists(key)).toBe(0);
    // Gone, it renews for nobody; then B takes it.
    expect(await a.renew()).toBe(false);
    expect(await b.acquire()).toBe(true);
    await b.release();
  });

  it('frees itself when its holder stops renewing: another takes it after its life', async ({ redis, prefix }) => {
    const key = `${prefix}:short`;
    const a = tokenLock(redis, key, 50);
    const b = tokenLock(redis, key, 60_000);
    expect(await a.acquire()).toBe(true);
    await waitFor(async () => (await redis.exists(key)) === 0, { timeoutMs: 10_000, intervalMs: 10, what: 'the lock to expire' });
    expect(await b.acquire()).toBe(true);
    // The stalled holder's late release leaves the new holder's lock alone.
    await a.release();
    expect(await redis.get(key)).toBe(b.token);
    await b.release();
  });
});
