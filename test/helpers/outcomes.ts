/**
 * A batch's outcomes as Redis keeps them (src/outcomes/outcome-codec.ts), read the way the
 * product reads them: for tests that look into the outcomes hash itself.
 */
import type { Redis } from 'ioredis';
import { decodeOutcome } from '../../src/outcomes/outcome-codec.js';
import type { OutcomeRecord } from '../../src/outcomes/types.js';
import type { Keys } from '../../src/redis/keys.js';

/** Every stored outcome of the batch, in row order. */
export async function storedOutcomes(redis: Redis, keys: Keys, batch: string): Promise<OutcomeRecord[]> {
  const raw = await redis.hgetall(keys.outcomes(batch));
  return Object.entries(raw)
    .map(([row, value]) => decodeOutcome(value, Number(row)))
    .sort((a, b) => a.row - b.row);
}

/** Row `row`'s stored outcome; undefined when it has none. */
export async function storedOutcome(redis: Redis, keys: Keys, batch: string, row: number): Promise<OutcomeRecord | undefined> {
  const raw = await redis.hget(keys.outcomes(batch), String(row));
  return raw === null ? undefined : decodeOutcome(raw, row);
}
