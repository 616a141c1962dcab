import type { Database } from '../../db/database.js';
import { laterExpiry, readBatchRow } from './batch-row.js';

/**
 * The whole input was read: the batch is loaded with `total` rows, and lives `retentionMs`
 * from now, or longer if an earlier load said so. Its expiry.
 */
export async function markLoaded(db: Database, id: string, total: number, retentionMs: number): Promise<number> {
  const now = Date.now();
  return db.transaction(async (trx) => {
    const was = await readBatchRow(trx, id, db.engine === 'postgres');
    const expiresAt = laterExpiry(was?.expires_at, now + retentionMs);
    await trx
      .updateTable('batches')
      .set({ total, state: 'loaded', loaded_at: new Date(now).toISOString(), expires_at: expiresAt })
      .where('id', '=', id)
      .execute();
    return expiresAt;
  });
}
