/**
 * The table `batches`: one row per batch, the one input file (path and fingerprint) it was
 * loaded from and the bank profile (path, sha256, the bank's INN) it is submitted under, its
 * state (loading, then loaded or failed), counts and times. It holds what `retry --missing`
 * needs to remake the batch's jobs without Redis, and no personal data: the profile itself is
 * in Redis only. What must hold: a batch's fingerprint never changes (other content is
 * refused); a loading batch's `loader` renews `loading_until` while it lives; `expires_at`
 * never moves earlier, and the pruning pass deletes the row after it.
 */
import type { Trx } from '../../db/database.js';
import type { BatchRow } from '../../db/schema.js';

/** A batch's row; locked until the transaction ends when `lock` (PostgreSQL, where rows are locked). */
export async function readBatchRow(trx: Trx, id: string, lock: boolean): Promise<BatchRow | undefined> {
  const query = trx.selectFrom('batches').selectAll().where('id', '=', id);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

/** The later of two expiries: a batch's never moves earlier. */
export const laterExpiry = (was: number | null | undefined, exp: number): number => Math.max(Number(was ?? 0), exp);
