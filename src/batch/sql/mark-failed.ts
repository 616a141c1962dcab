import type { Database } from '../../db/database.js';
import { laterExpiry, readBatchRow } from './batch-row.js';

/**
 * The load failed or was abandoned: the batch is failed with `error`, and lives its retention
 * from now (or later). Its expiry, and whether its profile goes now; undefined when there is no batch.
 */
export async function markFailed(
  db: Database,
  id: string,
  error: string,
): Promise<{ expiresAt: number; dropProfile: boolean } | undefined> {
  const now = Date.now();
  return db.transaction(async (trx) => {
    const was = await readBatchRow(trx, id, db.engine === 'postgres');
    if (!was) return undefined;
    const expiresAt = laterExpiry(was.expires_at, now + Number(was.retention_ms));
    await trx.updateTable('batches').set({ state: 'failed', error, expires_at: expiresAt }).where('id', '=', id).execute();
    // A batch that never loaded has no job left to read its profile: it goes now. (One that
    // loaded keeps it: its workers may still be finishing rows.)
    return { expiresAt, dropProfile: was.state !== 'loaded' };
  });
}
