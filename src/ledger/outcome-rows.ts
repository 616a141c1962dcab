/**
 * A row's outcome in the database, one function per operation (the table `outcomes`, keyed by
 * (batch, row)): what the results file, `status` and `retry --missing` read, whatever became of
 * Redis. Each runs in the caller's transaction, so an outcome is written in the same commit as
 * what it means for the deal's ledger entry (src/outcomes/store.ts).
 */
import type { Trx } from '../db/database.js';
import type { OnConflictBuilder } from 'kysely';
import type { DuplicateRow, NewOutcomeRow, OutcomeRow, Schema } from '../db/schema.js';
import { DUPLICATE_CODE, duplicateMessage, duplicatesOfRows } from '../db/duplicates.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import { columnsOf, executeCompiled, runCompiled } from '../db/compiled.js';

function rowOf(batch: string, r: OutcomeRecord, now: number): NewOutcomeRow {
  return {
    batch,
    row: r.row,
    deal_id: r.dealId,
    outcome: r.outcome,
    docflow_id: r.docflowId ?? null,
    cn: r.cadastralNumber ?? null,
    http_status: r.httpStatus ?? null,
    attempts: r.attempts,
    finished_at: r.finishedAt,
    error_code: r.errorCode ?? null,
    error_message: r.errorMessage ?? null,
    candidates: r.candidates ? JSON.stringify(r.candidates) : null,
    request_id: r.requestId ?? null,
    type: r.type ?? null,
    updated_at: now,
  };
}

/** The results file's record of a stored row. */
export function recordOf(o: OutcomeRow): OutcomeRecord {
  const record: OutcomeRecord = {
    row: o.row,
    dealId: o.deal_id,
    outcome: o.outcome as OutcomeRecord['outcome'],
    attempts: o.attempts,
    finishedAt: o.finished_at,
  };
  if (o.docflow_id !== null) record.docflowId = o.docflow_id;
  if (o.cn !== null) record.cadastralNumber = o.cn;
  if (o.http_status !== null) record.httpStatus = o.http_status;
  if (o.error_code !== null) record.errorCode = o.error_code;
  if (o.error_message !== null) record.errorMessage = o.error_message;
  if (o.candidates !== null) record.candidates = JSON.parse(o.candidates) as string[];
  if (o.request_id !== null) record.requestId = o.request_id;
  if (o.type !== null) record.type = o.type;
  return record;
}

/**
 * A row's outcome replacing the one it had: every column but the key from the inserted values
 * (`excluded`), so that the statement carries each value once.
 */
const replaceOnConflict = (oc: OnConflictBuilder<Schema, 'outcomes'>) =>
  oc.columns(['batch', 'row']).doUpdateSet((eb) => ({
    deal_id: eb.ref('excluded.deal_id'),
    outcome: eb.ref('excluded.outcome'),
    docflow_id: eb.ref('excluded.docflow_id'),
    cn: eb.ref('excluded.cn'),
    http_status: eb.ref('excluded.http_status'),
    attempts: eb.ref('excluded.attempts'),
    finished_at: eb.ref('excluded.finished_at'),
    error_code: eb.ref('excluded.error_code'),
    error_message: eb.ref('excluded.error_message'),
    candidates: eb.ref('excluded.candidates'),
    request_id: eb.ref('excluded.request_id'),
    type: eb.ref('excluded.type'),
    updated_at: eb.ref('excluded.updated_at'),
  }));

/**
 * Writes the row's outcome (replacing an earlier one); `ifAbsent`: only when it has none ('exists' then).
 * Compiled once (src/db/compiled.ts): every outcome runs it.
 */
export async function writeOutcome(
  trx: Trx,
  batch: string,
  record: OutcomeRecord,
  now: number,
  ifAbsent = false,
): Promise<'written' | 'exists'> {
  const row = rowOf(batch, record, now);
  const { columns, values } = columnsOf(row);
  const result = await executeCompiled(trx, `writeOutcome:${ifAbsent ? 'ifAbsent' : 'replace'}:${columns}`, values, () =>
    trx
      .insertInto('outcomes')
      .values(row)
      .onConflict((oc) => (ifAbsent ? oc.columns(['batch', 'row']).doNothing() : replaceOnConflict(oc))),
  );
  return ifAbsent && Number(result.numAffectedRows ?? 0n) === 0 ? 'exists' : 'written';
}

/** Many rows' outcomes at once (a load's refused rows): each replaces the row's earlier one. */
export async function writeOutcomes(trx: Trx, batch: string, records: readonly OutcomeRecord[], now: number): Promise<void> {
  for (let at = 0; at < records.length; at += CHUNK) {
    const values = records.slice(at, at + CHUNK).map((r) => rowOf(batch, r, now));
    await trx.insertInto('outcomes').values(values).onConflict(replaceOnConflict).execute();
  }
}

/** Rows per INSERT: 15 columns each stays under SQLite's 32,766 bound parameters and PostgreSQL's 65,535. */
const CHUNK = 500;

export async function readOutcome(trx: Trx, batch: string, row: number): Promise<OutcomeRecord | undefined> {
  // Compiled once: every claim runs it first (src/db/compiled.ts).
  const [o] = await runCompiled(trx, 'readOutcome', [batch, row], () =>
    trx.selectFrom('outcomes').selectAll().where('batch', '=', batch).where('row', '=', row),
  );
  return o && recordOf(o);
}

/** Rows `from`..`to` (inclusive), in order, `undefined` where a row has none. */
export async function readOutcomeRange(trx: Trx, batch: string, from: number, to: number): Promise<Array<OutcomeRecord | undefined>> {
  if (to < from) return [];
  const rows = await trx
    .selectFrom('outcomes')
    .selectAll()
    .where('batch', '=', batch)
    .where('row', '>=', from)
    .where('row', '<=', to)
    .orderBy('row')
    .execute();
  const page: Array<OutcomeRecord | undefined> = new Array<OutcomeRecord | undefined>(to - from + 1).fill(undefined);
  for (const o of rows) page[o.row - from] = recordOf(o);
  // A deal with two docflows at the gateway: its row says so, whatever its outcome was.
  for (const [row, d] of await duplicatesOfRows(trx, batch, from, to)) {
    const record = page[row - from];
    if (record) page[row - from] = withDuplicate(record, d);
  }
  return page;
}

/** A row whose deal has a duplicate docflow: DUPLICATE_DOCFLOW, the other docflow named. */
export function withDuplicate(
  record: OutcomeRecord,
  d: Pick<DuplicateRow, 'docflow_id' | 'kept_docflow_id' | 'how' | 'request_id'>,
): OutcomeRecord {
  const other = record.docflowId === d.docflow_id ? d.kept_docflow_id : d.docflow_id;
  return { ...record, errorCode: DUPLICATE_CODE, errorMessage: duplicateMessage(d), ...(other && { otherDocflowId: other }) };
}

/** Which of these rows have an outcome (one query). */
export async function rowsWithOutcome(trx: Trx, batch: string, rows: readonly number[]): Promise<Set<number>> {
  const found = new Set<number>();
  for (let at = 0; at < rows.length; at += CHUNK * 10) {
    const some = await trx
      .selectFrom('outcomes')
      .select('row')
      .where('batch', '=', batch)
      .where('row', 'in', rows.slice(at, at + CHUNK * 10))
      .execute();
    for (const o of some) found.add(o.row);
  }
  return found;
}

export async function countOutcomes(trx: Trx, batch: string): Promise<number> {
  const { n } = await trx
    .selectFrom('outcomes')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('batch', '=', batch)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Each batch's outcome count, for the dashboard's list of batches (one query). */
export async function countOutcomesOf(trx: Trx, batches: readonly string[]): Promise<Map<string, number>> {
  if (batches.length === 0) return new Map();
  const rows = await trx
    .selectFrom('outcomes')
    .select(['batch', (eb) => eb.fn.countAll<number | string | bigint>().as('n')])
    .where('batch', 'in', batches)
    .groupBy('batch')
    .execute();
  return new Map(rows.map((r) => [r.batch, Number(r.n)]));
}

/** Deletes an earlier outcome, only while it is still `earlier` (a retry remaking the row's job). */
export async function deleteOutcomeIf(trx: Trx, batch: string, earlier: OutcomeRecord): Promise<boolean> {
  const result = await trx
    .deleteFrom('outcomes')
    .where('batch', '=', batch)
    .where('row', '=', earlier.row)
    .where('outcome', '=', earlier.outcome)
    .where('finished_at', '=', earlier.finishedAt)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function clearOutcomes(trx: Trx, batch: string): Promise<void> {
  await trx.deleteFrom('outcomes').where('batch', '=', batch).execute();
}

/**
 * A row that ended ERR_UNCERTAIN learns its try's docflow (the feed found it, or an operator
 * named it). False when the row has no outcome yet.
 */
export async function settleUncertain(
  trx: Trx,
  batch: string,
  row: number,
  found: { outcome: string; docflowId: string; message: string },
  now: number,
): Promise<boolean> {
  const o = await trx.selectFrom('outcomes').select('error_code').where('batch', '=', batch).where('row', '=', row).executeTakeFirst();
  if (!o) return false;
  if (o.error_code !== 'ERR_UNCERTAIN') return true;
  await trx
    .updateTable('outcomes')
    .set({
      outcome: found.outcome,
      docflow_id: found.docflowId,
      http_status: found.outcome === 'queued' ? 200 : 201,
      error_code: null,
      error_message: found.message,
      updated_at: now,
    })
    .where('batch', '=', batch)
    .where('row', '=', row)
    .execute();
  return true;
}
