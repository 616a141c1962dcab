/**
 * Where our docflows stand at the registry, as the news feed follower stored them
 * (src/feed/feed-store.ts, the database's `docflows` table: one row a docflow, whether its
 * deal's entry names it or a resubmission replaced it). Read for many rows at once by the
 * results file, `status`, `payments`, `documents` and the dashboard.
 */
import type { Database } from '../db/database.js';
import type { DocflowRow } from '../db/schema.js';
import { DOCFLOW_STATES, SUBMITTED_OUTCOMES, type DocflowStatus, type Outcome } from '../domain/outcome.js';

/** A docflow's status from its row; undefined when the feed never showed it. */
export function docflowStatusOf(
  row: Pick<DocflowRow, 'st' | 'sat' | 'req' | 'uin' | 'amt' | 'payer' | 'rerr' | 'req_at' | 'files'>,
): DocflowStatus | undefined {
  const { st, sat: at, req, uin, amt, payer, rerr, req_at: reqAt, files } = row;
  if (!st) return undefined;
  const status: DocflowStatus = { state: st, stateAt: at ?? '' };
  if (req === 'signature' || req === 'payment') status.requirement = req;
  if (uin) status.paymentUin = uin;
  if (amt) status.paymentAmount = amt;
  if (payer) status.payer = payer;
  if (rerr) status.registryError = rerr;
  if (reqAt) status.requirementAt = reqAt;
  if (files) status.resultFiles = Number(files);
  return status;
}

/** A docflow of one of the bank's deals. */
export interface DealDocflow {
  /** The bank: its profile's INN. */
  bank: string;
  dealId: string;
  docflowId: string;
}

/** The bank (its profile's INN) that loaded a batch; '' for a batch the database does not know. */
export async function batchBank(db: Database, batch: string): Promise<string> {
  const row = await db.kysely.selectFrom('batches').select('bank').where('id', '=', batch).executeTakeFirst();
  return row?.bank ?? '';
}

/** The docflow of each submitted row (undefined for the others), for readDocflowStatuses. */
export function rowDocflows(
  bank: string,
  records: ReadonlyArray<{ outcome: string; dealId: string; docflowId?: string } | undefined>,
): Array<DealDocflow | undefined> {
  return records.map((r) =>
    r?.docflowId && SUBMITTED_OUTCOMES.has(r.outcome as Outcome) ? { bank, dealId: r.dealId, docflowId: r.docflowId } : undefined,
  );
}

/** Per query, at most this many docflows (bound values stay far below both engines' limits). */
const READ_CHUNK = 500;

/** The status of each docflow named (in order), undefined where the feed has not shown it. */
export async function readDocflowStatuses(
  db: Database,
  docflows: ReadonlyArray<DealDocflow | undefined>,
): Promise<Array<DocflowStatus | undefined>> {
  const statuses: Array<DocflowStatus | undefined> = new Array<DocflowStatus | undefined>(docflows.length).fill(undefined);
  const named = docflows.flatMap((d, i) => (d?.docflowId ? [{ d, i }] : []));
  for (let from = 0; from < named.length; from += READ_CHUNK) {
    const chunk = named.slice(from, from + READ_CHUNK);
    const rows = await db.kysely
      .selectFrom('docflows')
      .select(['docflow_id', 'st', 'sat', 'req', 'uin', 'amt', 'payer', 'rerr', 'req_at', 'files'])
      .where(
        'docflow_id',
        'in',
        chunk.map(({ d }) => d.docflowId),
      )
      .execute();
    const byId = new Map(rows.map((r) => [r.docflow_id, r]));
    for (const { d, i } of chunk) {
      const row = byId.get(d.docflowId);
      if (row) statuses[i] = docflowStatusOf(row);
    }
  }
  return statuses;
}

/**
 * How many of our docflows the feed last showed in each state (the `realty_docflows` gauge): a
 * count over the `docflows` table's state index (an index-only scan; it grows with the ledger's
 * years, see docs/performance.md).
 */
export async function docflowStateCounts(db: Database): Promise<Record<string, number>> {
  const rows = await db.kysely
    .selectFrom('docflows')
    .select(['st', (eb) => eb.fn.countAll<number>().as('n')])
    .where('st', 'is not', null)
    .groupBy('st')
    .execute();
  const counts: Record<string, number> = Object.fromEntries(DOCFLOW_STATES.map((s) => [s, 0]));
  for (const { st, n } of rows) if (st) counts[st] = Number(n);
  return counts;
}
