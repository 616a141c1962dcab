/**
 * What a worker keeps of its batches between jobs: whether each has loaded (a loaded
 * batch stays loaded, so it is read once) and its bank profile (read again after
 * TUNABLES.profileTtlMs, so a corrected profile reaches long-running workers). Bounded:
 * past its size a map starts afresh, which costs one read per batch.
 */
import { UnrecoverableError } from 'bullmq';
import { TUNABLES } from '../config.js';
import type { BatchStore } from '../batch/batch-store.js';
import type { BankProfile } from '../input/profile.js';

/**
 * Whether a batch's jobs may run: its file was read to its end, it is still being read, its load
 * failed or died, or it was loaded into another database (another ledger) than this worker's.
 */
export type Readiness = 'ready' | 'loading' | 'failed' | { elsewhere: string };

export interface BatchCache {
  readiness(batch: string): Promise<Readiness>;
  /** The batch's profile; a batch without one fails its jobs (UnrecoverableError). */
  profile(batch: string): Promise<BankProfile>;
  /** The profile last read, however old, without a read: for masking what a run lets through. */
  knownProfile(batch: string): BankProfile | undefined;
  /**
   * Without a read or a promise (nearly every job): whether the batch is known loaded, and its
   * profile while it is fresh. `readiness` and `profile` answer what these do not.
   */
  readyNow(batch: string): boolean;
  freshProfile(batch: string): BankProfile | undefined;
}

export interface BatchCacheOptions {
  profileTtlMs?: number;
  profileCacheSize?: number;
  loadedCacheSize?: number;
  now?: () => number;
  /** This worker's database id: a batch loaded into another database is not run here. */
  databaseId?: () => Promise<string>;
}

export function createBatchCache(
  store: Pick<BatchStore, 'state' | 'profile'> & Partial<Pick<BatchStore, 'database'>>,
  options: BatchCacheOptions = {},
): BatchCache {
  const {
    profileTtlMs = TUNABLES.profileTtlMs,
    profileCacheSize = TUNABLES.profileCacheSize,
    loadedCacheSize = TUNABLES.loadedCacheSize,
    now = Date.now,
  } = options;
  const profiles = new Map<string, { profile: BankProfile; at: number }>();
  const loaded = new Set<string>();
  /** Profile reads in flight, by batch. */
  const reading = new Map<string, Promise<BankProfile | undefined>>();
  return {
    async readiness(batch) {
      if (loaded.has(batch)) return 'ready';
      const state = await store.state(batch);
      // No batch row: it may be another database's (its id is kept in Redis beside the profile).
      if (state === 'loaded' || state === 'loading' || state === undefined) {
        const [theirs, ours] = await Promise.all([store.database?.(batch), options.databaseId?.()]);
        if (theirs && ours && theirs !== ours) return { elsewhere: theirs };
      }
      if (state === 'loaded') {
        if (loaded.size > loadedCacheSize) loaded.clear();
        loaded.add(batch);
        return 'ready';
      }
      return state === 'loading' ? 'loading' : 'failed';
    },
    async profile(batch) {
      const cached = profiles.get(batch);
      if (cached && now() - cached.at < profileTtlMs) return cached.profile;
      // The jobs that start together (a worker's first turn, the profile's expiry) share one read.
      let read = reading.get(batch);
      if (read === undefined) {
        const shared = store.profile(batch);
        const done = (): void => {
          if (reading.get(batch) === shared) reading.delete(batch);
        };
        shared.then(done, done);
        reading.set(batch, (read = shared));
      }
      const profile = await read;
      if (!profile) throw new UnrecoverableError(`batch ${batch} has no bank profile in Redis`);
      if (profiles.size > profileCacheSize) profiles.clear();
      profiles.set(batch, { profile, at: now() });
      return profile;
    },
    knownProfile(batch) {
      return profiles.get(batch)?.profile;
    },
    readyNow(batch) {
      return loaded.has(batch);
    },
    freshProfile(batch) {
      const cached = profiles.get(batch);
      return cached && now() - cached.at < profileTtlMs ? cached.profile : undefined;
    },
  };
}
