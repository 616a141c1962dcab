import type { Database } from '../../db/database.js';

/** The newest batches first (by creation, then id), at most `limit`, leaving out those past their expiry. */
export async function listBatches(db: Database, limit: number): Promise<Array<{ id: string; createdMs: number }>> {
  const rows = await db.kysely
    .selectFrom('batches')
    .select(['id', 'created_ms'])
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', Date.now())]))
    .orderBy('created_ms', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, createdMs: Number(r.created_ms) }));
}
