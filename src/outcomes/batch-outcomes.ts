/**
 * A batch's outcomes in input order, read in pages: what the results file, `status`
 * and the missing-rows check walk through without holding a million rows.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { createOutcomeStore } from './store.js';
import type { OutcomeRecord } from './types.js';

const PAGE = 1000;

/** Every row's outcome, in input order, `pending` where there is none yet. */
export async function* batchOutcomes(redis: Redis, keys: Keys, batch: string, total: number): AsyncGenerator<OutcomeRecord> {
  const store = createOutcomeStore(redis, keys);
  for (let from = 1; from <= total; from += PAGE) {
    const to = Math.min(total, from + PAGE - 1);
    const page = await store.range(batch, from, to);
    const missing = page.flatMap((r, i) => (r ? [] : [from + i]));
    const dealIds = missing.length > 0 ? await redis.hmget(keys.rows(batch), ...missing.map(String)) : [];
    let m = 0;
    for (let i = 0; i < page.length; i++) {
      const record = page[i];
      if (record) yield record;
      else yield { row: from + i, dealId: dealIds[m++] ?? '', outcome: 'pending', attempts: 0, finishedAt: '' };
    }
  }
}
