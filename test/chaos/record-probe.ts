/**
 * The chaos suite's view of the system of record: the rows' outcomes as the database holds them,
 * read from the test process as another host would. Polled every 100 to 200 ms while the fleet
 * works, which `status` could not be (a process of its own, most of a second of CPU on a 2-core
 * host the workers share); it answers while Redis is down or empty, as the record must.
 */
import type { Redis } from 'ioredis';
import type { Database } from '../../src/db/database.js';
import { openQueue } from '../../src/queue/deal-queue.js';
import { dealJobId } from '../../src/queue/job-data.js';
import type { Keys } from '../../src/redis/keys.js';

/** A row's outcome and its docflow ('' for none), as the results file gives them. */
export interface KeptOutcome {
  outcome: string;
  docflowId: string;
}

export interface RecordProbe {
  /** How many rows of these batches have their outcome. */
  count(batches: readonly string[]): Promise<number>;
  /** Every row of these batches that has its outcome, by `rowKey(batch, row)`. */
  outcomes(batches: readonly string[]): Promise<Map<string, KeptOutcome>>;
  /**
   * The batch past its retention, as if it had expired: its rows and outcomes leave the database,
   * its keys and its deals' jobs leave Redis; the ledger stays (it outlives batches by years).
   */
  forget(batch: string, dealIds: readonly string[]): Promise<void>;
}

export const rowKey = (batch: string, row: number): string => `${batch}#${row}`;

export function createRecordProbe(db: Database, redis: Redis, keys: Keys): RecordProbe {
  return {
    async count(batches) {
      const found = await db.kysely
        .selectFrom('outcomes')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('batch', 'in', [...batches])
        .where('outcome', '!=', 'pending')
        .executeTakeFirstOrThrow();
      return Number(found.n);
    },
    async outcomes(batches) {
      const rows = await db.kysely
        .selectFrom('outcomes')
        .select(['batch', 'row', 'outcome', 'docflow_id'])
        .where('batch', 'in', [...batches])
        .where('outcome', '!=', 'pending')
        .execute();
      return new Map(rows.map((r) => [rowKey(r.batch, r.row), { outcome: r.outcome, docflowId: r.docflow_id ?? '' }]));
    },
    async forget(batch, dealIds) {
      await db.transaction(async (trx) => {
        await trx.deleteFrom('outcomes').where('batch', '=', batch).execute();
        await trx.deleteFrom('batches').where('id', '=', batch).execute();
      });
      // The batch's hash and every key under it (rows, checkpoints, contents ...), whatever they are named.
      const doomed = [keys.batch(batch)];
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${keys.batch(batch)}:*`, 'COUNT', 1000);
        doomed.push(...found);
        cursor = next;
      } while (cursor !== '0');
      await redis.del(...doomed);
      const queue = openQueue(redis, keys);
      try {
        for (const dealId of dealIds) await queue.remove(dealJobId(batch, dealId)).catch(() => 0);
      } finally {
        await queue.close();
      }
    },
  };
}
