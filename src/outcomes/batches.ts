/**
 * A batch: one input file's rows, with the bank profile they are submitted
 * under. Workers on any host read the profile from here, so `work` needs none.
 *
 * A batch belongs to one file (its sha256): loading other content into it is
 * refused, since its rows would take the places of the first file's rows. Its
 * jobs are not sent until the whole file was read (`state` loaded); a load
 * that fails part-way leaves `state` failed and takes its jobs back.
 */
import type { Redis } from 'ioredis';
import { UsageError } from '../errors.js';
import type { BankProfile } from '../input/profile.js';
import type { Keys } from '../queue/keys.js';

export type BatchState = 'loading' | 'loaded' | 'failed';

export interface BatchMeta {
  id: string;
  file: string;
  /** sha256 of the input file's bytes. */
  sha256: string;
  createdAt: string;
  state: BatchState;
  /** Rows read from the input; set once the whole file has been read. */
  total?: number;
  loadedAt?: string;
  /** Why the load failed, when it did. */
  error?: string;
}

export interface BatchStore {
  /**
   * Creates the batch for this file, or reopens it for the same content (a load
   * run again); refuses other content. The profile is refreshed either way.
   */
  open(meta: Pick<BatchMeta, 'id' | 'file' | 'sha256'>, profile: BankProfile): Promise<void>;
  setTotal(id: string, total: number): Promise<void>;
  fail(id: string, error: string): Promise<void>;
  get(id: string): Promise<BatchMeta | undefined>;
  state(id: string): Promise<BatchState | undefined>;
  profile(id: string): Promise<BankProfile | undefined>;
}

export function createBatchStore(redis: Redis, keys: Keys): BatchStore {
  return {
    async open(meta, profile) {
      const key = keys.batch(meta.id);
      const now = new Date();
      const replies = (await redis.multi().hsetnx(key, 'sha256', meta.sha256).hget(key, 'sha256').exec()) ?? [];
      const [created, sha] = replies.map(([, value]) => value);
      if (created !== 1 && sha !== meta.sha256) {
        const file = await redis.hget(key, 'file');
        throw new UsageError(
          `Batch ${meta.id} holds another file (${file ?? 'unknown'}); its rows would take the places of that file's rows. Give this file a new --batch.`,
        );
      }
      // A batch that loaded once stays loaded: the same content again adds no rows,
      // and its workers must not stop while it is read a second time.
      const state = (await redis.hget(key, 'state')) === 'loaded' ? 'loaded' : 'loading';
      await redis
        .multi()
        .hsetnx(key, 'createdAt', now.toISOString())
        .hset(key, 'id', meta.id, 'file', meta.file, 'state', state, 'profile', JSON.stringify(profile))
        .hdel(key, 'error')
        .zadd(keys.batches, 'NX', now.getTime(), meta.id)
        .exec();
    },
    async setTotal(id, total) {
      await redis.hset(keys.batch(id), 'total', String(total), 'state', 'loaded', 'loadedAt', new Date().toISOString());
    },
    async fail(id, error) {
      await redis.hset(keys.batch(id), 'state', 'failed', 'error', error);
    },
    async get(id) {
      const h = await redis.hgetall(keys.batch(id));
      if (!h.id) return undefined;
      const meta: BatchMeta = { id: h.id, file: h.file ?? '', sha256: h.sha256 ?? '', createdAt: h.createdAt ?? '', state: (h.state as BatchState) ?? 'loading' };
      if (h.total !== undefined) meta.total = Number(h.total);
      if (h.loadedAt) meta.loadedAt = h.loadedAt;
      if (h.error) meta.error = h.error;
      return meta;
    },
    async state(id) {
      return ((await redis.hget(keys.batch(id), 'state')) as BatchState | null) ?? undefined;
    },
    async profile(id) {
      const raw = await redis.hget(keys.batch(id), 'profile');
      return raw ? (JSON.parse(raw) as BankProfile) : undefined;
    },
  };
}
