/**
 * Docflows a deal should not have (the table `duplicates`, migration 0005), one operation per
 * function. What cannot be prevented is said: a second docflow for one requestId (the gateway
 * made two for one try's repeated call), or a try's docflow that the feed showed only after the
 * deal's next try was claimed (the feed was later than its allowance). The deal keeps the
 * ledger's docflow; the other is followed like any other until it is cancelled, and the row that
 * holds the deal names both (errorCode DUPLICATE_DOCFLOW, `otherDocflowId`).
 */
import type { Trx } from './database.js';
import type { DuplicateRow } from './schema.js';

export type DuplicateHow = 'feed-request-id' | 'feed-older-try' | 'answer';

/** The code a row with a duplicate carries in its results line. */
export const DUPLICATE_CODE = 'DUPLICATE_DOCFLOW';

/** Records a duplicate once (by its docflow): true when it is new. */
export async function recordDuplicate(trx: Trx, d: DuplicateRow): Promise<boolean> {
  const done = await trx
    .insertInto('duplicates')
    .values(d)
    .onConflict((c) => c.column('docflow_id').doNothing())
    .executeTakeFirst();
  return Number(done.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The duplicates of a batch's rows `from`..`to`, by row (a row's first, by when seen). */
export async function duplicatesOfRows(trx: Trx, batch: string, from: number, to: number): Promise<Map<number, DuplicateRow>> {
  const rows = await trx
    .selectFrom('duplicates')
    .selectAll()
    .where('batch', '=', batch)
    .where('row', '>=', from)
    .where('row', '<=', to)
    .orderBy('seen_at')
    .execute();
  const byRow = new Map<number, DuplicateRow>();
  for (const d of rows) if (!byRow.has(d.row)) byRow.set(d.row, d);
  return byRow;
}

/** How many of a batch's rows hold a deal with a duplicate. */
export async function countDuplicateRows(trx: Trx, batch: string): Promise<number> {
  const { n } = await trx
    .selectFrom('duplicates')
    .select((eb) => eb.fn.count<number | string | bigint>('row').distinct().as('n'))
    .where('batch', '=', batch)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Every duplicate this database knows (the metric and its alert), and the latest. */
export async function duplicateTotals(trx: Trx): Promise<{ count: number; lastAt: number | null }> {
  const r = await trx
    .selectFrom('duplicates')
    .select((eb) => [eb.fn.countAll<number | string | bigint>().as('n'), eb.fn.max('seen_at').as('last')])
    .executeTakeFirstOrThrow();
  return { count: Number(r.n), lastAt: r.last === null ? null : Number(r.last) };
}

/** One sentence for a row's results line: both docflows, and what to do. */
export function duplicateMessage(d: Pick<DuplicateRow, 'docflow_id' | 'kept_docflow_id' | 'how' | 'request_id'>): string {
  const seen =
    d.how === 'answer'
      ? `the gateway answered with docflow ${d.docflow_id} while the deal already had ${d.kept_docflow_id}`
      : d.how === 'feed-request-id'
        ? `the news feed showed a second docflow ${d.docflow_id} for requestId ${d.request_id}, beside ${d.kept_docflow_id}`
        : `the news feed showed docflow ${d.docflow_id} of an earlier try (${d.request_id}) after the next try was sent; the deal has ${d.kept_docflow_id || 'that next try'}`;
  return `the gateway holds two docflows for this deal: ${seen}; both are followed, one must be cancelled at the gateway`;
}

/** Which of these docflows are a deal's other docflow (never the one the ledger keeps): none is ever signed. */
export async function duplicateDocflowIds(trx: Trx, docflowIds: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const ids = [...new Set(docflowIds)];
  for (let from = 0; from < ids.length; from += 500) {
    const rows = await trx
      .selectFrom('duplicates')
      .select('docflow_id')
      .where('docflow_id', 'in', ids.slice(from, from + 500))
      .execute();
    for (const r of rows) found.add(r.docflow_id);
  }
  return found;
}

/** Every duplicate held by a batch's rows, by row, then by when seen. */
export async function duplicatesOfBatch(trx: Trx, batch: string): Promise<DuplicateRow[]> {
  return trx.selectFrom('duplicates').selectAll().where('batch', '=', batch).orderBy('row').orderBy('seen_at').execute();
}
