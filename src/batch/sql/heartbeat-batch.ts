import type { Database } from '../../db/database.js';
import { LOADER as LOADER_TUNABLES } from '../../config.js';
import { laterExpiry, readBatchRow } from './batch-row.js';

/**
 * The loader is alive: its hold on the batch runs LOADER.claimMs from now, and the batch's
 * expiry its retention from now (or later). The new expiry; undefined when there is no batch.
 */
export async function heartbeatBatch(db: Database, id: string): Promise<number | undefined> {
  const now = Date.now();
  return db.transaction(async (trx) => {
    const was = await readBatchRow(trx, id, db.engine === 'postgres');
    if (!was) return undefined;
    const expiresAt = laterExpiry(was.expires_at, now + Number(was.retention_ms));
    await trx
      .updateTable('batches')
      .set({ loading_until: now + LOADER_TUNABLES.claimMs, expires_at: expiresAt })
      .where('id', '=', id)
      .execute();
    return expiresAt;
  });
}
