/** The worker's cache of its batches: loaded state and profile, read from the batch store as rarely as allowed. */
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it, vi } from 'vitest';
import type { BatchState } from '../../src/batch/batch-store.js';
import type { BankProfile } from '../../src/input/profile.js';
import { createBatchCache } from '../../src/worker/batch-cache.js';

const profileOf = (inn: string) => ({ organization: { inn } }) as unknown as BankProfile;

/** A batch store with this state and profile (null: none). */
function store(state: BatchState | undefined, profile: BankProfile | null = profileOf('77')) {
  return { state: vi.fn(async () => state), profile: vi.fn(async (): Promise<BankProfile | undefined> => profile ?? undefined) };
}

describe('the batch cache', () => {
  it('reads a loaded batch once: a loaded batch stays loaded', async () => {
    const s = store('loaded');
    const cache = createBatchCache(s);
    expect(await cache.readiness('b')).toBe('ready');
    s.state.mockResolvedValue('failed');
    expect(await cache.readiness('b')).toBe('ready');
    expect(s.state).toHaveBeenCalledTimes(1);
  });

  it('reads a loading batch at every job, and tells a failed or vanished one', async () => {
    const s = store('loading');
    const cache = createBatchCache(s);
    expect(await cache.readiness('b')).toBe('loading');
    expect(await cache.readiness('b')).toBe('loading');
    expect(s.state).toHaveBeenCalledTimes(2);
    expect(await createBatchCache(store('failed')).readiness('b')).toBe('failed');
    expect(await createBatchCache(store(undefined)).readiness('b')).toBe('failed');
  });

  it('keeps a profile for its time to live, then reads it again', async () => {
    let now = 1_000_000;
    const s = store('loaded', profileOf('77'));
    const cache = createBatchCache(s, { profileTtlMs: 60_000, now: () => now });
    expect((await cache.profile('b')).organization.inn).toBe('77');
    s.profile.mockResolvedValue(profileOf('78'));
    now += 59_999;
    expect((await cache.profile('b')).organization.inn).toBe('77');
    now += 1;
    expect((await cache.profile('b')).organization.inn).toBe('78');
    expect(s.profile).toHaveBeenCalledTimes(2);
  });

  it('reads a profile once for the jobs that ask at the same time, and again after a failed read', async () => {
    const s = store('loaded');
    const cache = createBatchCache(s);
    s.profile.mockRejectedValueOnce(new Error('connection lost'));
    const failed = await Promise.allSettled([cache.profile('b'), cache.profile('b')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(s.profile).toHaveBeenCalledTimes(1);
    const profiles = await Promise.all(Array.from({ length: 100 }, () => cache.profile('b')));
    expect(profiles.every((p) => p.organization.inn === '77')).toBe(true);
    expect(s.profile).toHaveBeenCalledTimes(2);
  });

  it('fails each job that asks for a batch without a profile, whether or not they asked together', async () => {
    const s = store('loaded', null);
    const cache = createBatchCache(s);
    const asked = await Promise.allSettled([cache.profile('b'), cache.profile('b')]);
    for (const r of asked) expect(r.status === 'rejected' && r.reason instanceof UnrecoverableError).toBe(true);
    await expect(cache.profile('b')).rejects.toBeInstanceOf(UnrecoverableError);
    expect(s.profile).toHaveBeenCalledTimes(2);
  });

  it('gives the last profile read for masking without a read, however old, and none before', async () => {
    let now = 0;
    const s = store('loaded');
    const cache = createBatchCache(s, { profileTtlMs: 10, now: () => now });
    expect(cache.knownProfile('b')).toBeUndefined();
    await cache.profile('b');
    now = 1_000;
    expect(cache.knownProfile('b')?.organization.inn).toBe('77');
    expect(s.profile).toHaveBeenCalledTimes(1);
  });

  it('tells a loaded batch and a fresh profile without a read, and nothing it would have to read', async () => {
    let now = 0;
    const s = store('loaded');
    const cache = createBatchCache(s, { profileTtlMs: 10, now: () => now });
    expect(cache.readyNow('b')).toBe(false);
    expect(cache.freshProfile('b')).toBeUndefined();
    await cache.readiness('b');
    await cache.profile('b');
    expect(cache.readyNow('b')).toBe(true);
    expect(cache.freshProfile('b')?.organization.inn).toBe('77');
    now = 10;
    // Past its time to live the profile is read again by profile(), never given from here.
    expect(cache.freshProfile('b')).toBeUndefined();
    expect(createBatchCache(store('loading')).readyNow('b')).toBe(false);
    expect(s.state).toHaveBeenCalledTimes(1);
    expect(s.profile).toHaveBeenCalledTimes(1);
  });

  it('fails the jobs of a batch without a profile for good', async () => {
    await expect(createBatchCache(store('loaded', null)).profile('b')).rejects.toBeInstanceOf(UnrecoverableError);
  });

  it('stays bounded: past its size it starts afresh', async () => {
    const s = store('loaded');
    const cache = createBatchCache(s, { profileCacheSize: 2, loadedCacheSize: 2 });
    for (const b of ['a', 'b', 'c', 'd']) {
      await cache.profile(b);
      await cache.readiness(b);
    }
    // 'a' was dropped when the maps started afresh: read again.
    await cache.profile('a');
    await cache.readiness('a');
    expect(s.profile).toHaveBeenCalledTimes(5);
    expect(s.state).toHaveBeenCalledTimes(5);
  });
});
