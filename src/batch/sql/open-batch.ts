import type { Database, Trx } from '../../db/database.js';
import type { BatchRow } from '../../db/schema.js';
import { LOADER, mayOpen } from '../batch-open.js';
import { LOADER as LOADER_TUNABLES } from '../../config.js';
import { laterExpiry, readBatchRow } from './batch-row.js';

/** What a load says of its batch when it opens it. */
export interface OpenBatch {
  id: string;
  file: string;
  fingerprint: string;
  reading?: string;
  resubmit?: boolean;
  filesRoot?: string;
  database?: string;
  type?: string;
  profilePath?: string;
  profileSha256?: string;
}

/**
 * Creates the batch's row, or reopens it for the same input (mayOpen refuses other content), in
 * one transaction: the load's loader holds it for LOADER.claimMs, and its expiry is `retentionMs`
 * from now or later. `fresh`: the batch starts from nothing (new, or an earlier load failed).
 */
export async function openBatch(
  db: Database,
  meta: OpenBatch,
  bank: string,
  retentionMs: number,
): Promise<{ fresh: boolean; expiresAt: number }> {
  const now = Date.now();
  const loadingUntil = now + LOADER_TUNABLES.claimMs;
  const lock = db.engine === 'postgres';
  return db.transaction(async (trx) => {
    let before = await readBatchRow(trx, meta.id, lock);
    const created = !before;
    if (!before) {
      await insertBatch(trx, meta, now, retentionMs);
      before = await readBatchRow(trx, meta.id, lock);
    }
    const fresh = mayOpen(
      meta,
      created,
      {
        fingerprint: before?.fingerprint,
        file: before?.file,
        state: created ? undefined : before?.state,
        loadingUntil: String(before?.loading_until ?? 0),
        loader: before?.loader,
        resubmit: before?.resubmit === 1 ? '1' : '0',
      },
      now,
    );
    const expiresAt = laterExpiry(before?.expires_at, now + retentionMs);
    await trx
      .updateTable('batches')
      .set(openedRow(meta, bank, before, { loadingUntil, retentionMs, expiresAt }))
      .where('id', '=', meta.id)
      .execute();
    return { fresh, expiresAt };
  });
}

/** A new batch's row, empty but for its input; a concurrent load's insert of the same id wins quietly. */
async function insertBatch(trx: Trx, meta: OpenBatch, now: number, retentionMs: number): Promise<void> {
  await trx
    .insertInto('batches')
    .values({
      id: meta.id,
      file: meta.file,
      fingerprint: meta.fingerprint,
      state: 'loading',
      created_at: new Date(now).toISOString(),
      created_ms: now,
      retention_ms: retentionMs,
      reading: '{}',
      resubmit: 0,
      files_root: '',
      total: null,
      error: null,
      loaded_at: null,
      loading_until: 0,
      loader: '',
      expires_at: null,
      database_id: '',
      bank: '',
      type: '',
      profile_path: '',
      profile_sha256: '',
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** What a load's opening writes into the batch's row. */
function openedRow(
  meta: OpenBatch,
  bank: string,
  before: BatchRow | undefined,
  at: { loadingUntil: number; retentionMs: number; expiresAt: number },
): Partial<BatchRow> {
  return {
    file: meta.file,
    reading: meta.reading ?? '{}',
    resubmit: meta.resubmit ? 1 : 0,
    files_root: meta.filesRoot ?? '',
    state: before?.state === 'loaded' ? 'loaded' : 'loading',
    error: null,
    // A batch that loaded once keeps its total: the same input again adds no rows.
    ...(before?.state !== 'loaded' && { total: null }),
    loading_until: at.loadingUntil,
    loader: LOADER,
    retention_ms: at.retentionMs,
    expires_at: at.expiresAt,
    database_id: meta.database ?? '',
    bank,
    type: meta.type ?? '',
    profile_path: meta.profilePath ?? '',
    profile_sha256: meta.profileSha256 ?? '',
  };
}
