import type { Database } from '../../db/database.js';
import type { BatchRow } from '../../db/schema.js';

/** One column of a batch's row, read alone; undefined when there is no batch. */
export async function readBatchField<C extends 'state' | 'database_id' | 'expires_at'>(
  db: Database,
  id: string,
  column: C,
): Promise<BatchRow[C] | undefined> {
  const row = await db.kysely.selectFrom('batches').select(column).where('id', '=', id).executeTakeFirst();
  return (row as Pick<BatchRow, C> | undefined)?.[column];
}
