/**
 * A batch: one input file's rows, with the bank profile they are submitted
 * under. Workers on any host read the profile from here, so `work` needs none.
 */
import type { Redis } from 'ioredis';
import type { BankProfile } from '../input/profile.js';
import type { Keys } from '../queue/keys.js';

export interface BatchMeta {
  id: string;
  file: string;
  createdAt: string;
  /** Rows read from the input; set once the whole file has been read. */
  total?: number;
  loadedAt?: string;
}

export interface BatchStore {
  /** Creates the batch, or refreshes its profile when it exists (a reload into the same batch). */
  open(meta: Pick<BatchMeta, 'id' | 'file'>, profile: BankProfile): Promise<void>;
  setTotal(id: string, total: number): Promise<void>;
  get(id: string): Promise<BatchMeta | undefined>;
  profile(id: string): Promise<BankProfile | undefined>;
}

export function createBatchStore(redis: Redis, keys: Keys): BatchStore {
  return {
    async open(meta, profile) {
      const key = keys.batch(meta.id);
      const now = new Date();
      await redis
        .multi()
        .hsetnx(key, 'createdAt', now.toISOString())
        .hset(key, 'id', meta.id, 'file', meta.file, 'profile', JSON.stringify(profile))
        .zadd(keys.batches, 'NX', now.getTime(), meta.id)
        .exec();
    },
    async setTotal(id, total) {
      await redis.hset(keys.batch(id), 'total', String(total), 'loadedAt', new Date().toISOString());
    },
    async get(id) {
      const h = await redis.hgetall(keys.batch(id));
      if (!h.id) return undefined;
      const meta: BatchMeta = { id: h.id, file: h.file ?? '', createdAt: h.createdAt ?? '' };
      if (h.total !== undefined) meta.total = Number(h.total);
      if (h.loadedAt) meta.loadedAt = h.loadedAt;
      return meta;
    },
    async profile(id) {
      const raw = await redis.hget(keys.batch(id), 'profile');
      return raw ? (JSON.parse(raw) as BankProfile) : undefined;
    },
  };
}
