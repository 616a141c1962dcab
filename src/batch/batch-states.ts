/**
 * A batch's rows by outcome and by docflow state, in one walk of its outcomes: what
 * `status`, the morning report and the dashboard say of where its deals stand at the
 * registry, and whether the batch is registered (every row final).
 */
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';
import { createStateTally, type StateCounts } from '../outcomes/state-tally.js';
import { emptyCounts, type Outcome } from '../domain/outcome.js';
import type { BatchMeta } from './batch-store.js';

export interface BatchStates extends StateCounts {
  outcomes: Record<Outcome, number>;
  /** Every row has its outcome (the batch is loaded and none is pending). */
  done: boolean;
}

export async function batchStates(
  redis: Redis,
  keys: Keys,
  db: Database,
  meta: Pick<BatchMeta, 'id' | 'total' | 'state'>,
): Promise<BatchStates> {
  const outcomes = emptyCounts();
  const tally = createStateTally();
  for await (const record of batchOutcomes(redis, keys, db, meta.id, meta.total ?? 0, { states: true })) {
    outcomes[record.outcome]++;
    tally.add(record);
  }
  const done = meta.state === 'loaded' && outcomes.pending === 0;
  return { outcomes, done, ...tally.result(done) };
}
