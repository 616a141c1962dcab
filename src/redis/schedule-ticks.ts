/**
 * How each schedule's last tick ended, for the dashboard's `/metrics`
 * (`realty_schedule_last_tick_success`, `realty_schedule_last_tick_timestamp_seconds`).
 * The tick writes it (src/schedule/run-tick.ts), the dashboard reads it: it sits
 * here, below both, since neither may import the other.
 *
 * Keys (src/redis/keys.ts):
 * - `scheduleTick(name)`: a hash `endedAt` (ms), `success` (`1`/`0`), `files`, `error`;
 *   it expires TICK_RECORD_MS after the tick that wrote it;
 * - `scheduleTicks`: a sorted set of schedule names by their last tick's end, so that
 *   the dashboard lists them without a SCAN; names older than TICK_RECORD_MS leave it
 *   at the next tick of any schedule, and are skipped on reading meanwhile.
 */
import type { RedisClient as Redis } from './connection.js';
import type { Keys } from './keys.js';

/** How long a schedule's last tick is remembered: a week and a day, past any weekly schedule. */
export const TICK_RECORD_MS = 8 * 24 * 60 * 60 * 1000;

/** At most this many schedules are read per scrape (the most recently ticked). */
export const MAX_SCHEDULES = 100;

export interface TickRecord {
  name: string;
  /** When the tick ended (ms since epoch). */
  endedAt: number;
  /** The tick ran and every file of it ended done or duplicate. */
  success: boolean;
  /** Files the tick took. */
  files: number;
  /** Why it failed, when it did. */
  error?: string;
}

export async function recordTick(redis: Redis, keys: Keys, record: TickRecord): Promise<void> {
  const key = keys.scheduleTick(record.name);
  const fields = ['endedAt', String(record.endedAt), 'success', record.success ? '1' : '0', 'files', String(record.files)];
  const multi = redis.multi().del(key);
  multi.hset(key, ...fields, ...(record.error === undefined ? [] : ['error', record.error.slice(0, 500)]));
  multi.pexpire(key, TICK_RECORD_MS);
  multi.zadd(keys.scheduleTicks, record.endedAt, record.name);
  multi.zremrangebyscore(keys.scheduleTicks, '-inf', `(${record.endedAt - TICK_RECORD_MS}`);
  multi.pexpire(keys.scheduleTicks, TICK_RECORD_MS);
  const replies = (await multi.exec()) ?? [];
  for (const [err] of replies) if (err) throw err;
}

/** The last tick of each schedule that ticked in the last TICK_RECORD_MS, at most MAX_SCHEDULES of them. */
export async function readTicks(redis: Redis, keys: Keys): Promise<TickRecord[]> {
  const names = await redis.zrevrangebyscore(keys.scheduleTicks, '+inf', Date.now() - TICK_RECORD_MS, 'LIMIT', 0, MAX_SCHEDULES);
  if (names.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const name of names) pipeline.hgetall(keys.scheduleTick(name));
  const replies = (await pipeline.exec()) ?? [];
  const records: TickRecord[] = [];
  names.forEach((name, i) => {
    const [err, raw] = replies[i] ?? [];
    if (err) throw err;
    const h = (raw ?? {}) as Record<string, string>;
    const endedAt = Number(h.endedAt);
    // Expired (or never complete): the sorted set outlived it.
    if (!h.endedAt || !Number.isFinite(endedAt)) return;
    const record: TickRecord = { name, endedAt, success: h.success === '1', files: Number(h.files ?? 0) };
    if (h.error) record.error = h.error;
    records.push(record);
  });
  return records;
}
