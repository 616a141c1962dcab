/**
 * A batch as the database keeps it (the table `batches`, src/batch/batch-store.ts): for tests
 * that look at a batch's own row, or set it as another process or an earlier run would have left it.
 */
import type { Database } from '../../src/db/database.js';
import type { BatchRow } from '../../src/db/schema.js';

/** The batch's row; undefined when the database has none. */
export async function batchRow(db: Database, id: string): Promise<BatchRow | undefined> {
  return db.kysely.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Sets the batch's state (`loading` holds its jobs back, as while its file is read). */
export async function setBatchState(db: Database, id: string, state: 'loading' | 'loaded' | 'failed'): Promise<void> {
  await db.kysely.updateTable('batches').set({ state }).where('id', '=', id).execute();
}

/** The batch is gone from the database with its outcomes, as the pruning pass leaves one past its expiry. */
export async function expireBatch(db: Database, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.deleteFrom('outcomes').where('batch', '=', id).execute();
    await trx.deleteFrom('batches').where('id', '=', id).execute();
  });
}
