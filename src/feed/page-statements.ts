/**
 * The statements a news feed page sends in its transaction (feed-page.ts decides what they
 * carry), in the order it sends them: the feed's row read (locked) for the cursor's
 * compare-and-set, its docflows read, a docflow the ledger lacked entered, the docflows and
 * their history written, the feed's row moved on.
 *
 * The table `docflows` holds one row per docflow of ours, where it stands at the registry as the
 * feed last showed it (its requirement since when it stands, payment, masked payer and error);
 * `docflow_history` each state a docflow was seen in, once (its natural key), with when the
 * follower saw it (database clock). Both only grow with the feed, and hold ids, states and
 * masked texts: no personal data.
 */
import type { Compilable, Selectable, Updateable } from 'kysely';
import type { Trx } from '../db/database.js';
import type { DocflowHistoryTable, DocflowRow, FeedTable, LedgerRow } from '../db/schema.js';
import { columnsOf, executeCompiled, runCompiled } from '../db/compiled.js';
import { COMPILED_PAGE_MAX } from './page-rows.js';

export type FeedRow = Selectable<FeedTable>;
export type HistoryRow = Selectable<DocflowHistoryTable>;

/** The feed's one row, locked until the page commits (PostgreSQL; SQLite's transaction holds the write lock already). */
export async function lockFeedRow(trx: Trx, lock: boolean): Promise<FeedRow | undefined> {
  const query = trx.selectFrom('feed').selectAll().where('id', '=', 1);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

/** Whether a row of a batch (not one the feed made) claimed a deal of this bank: the bank is this deployment's. */
export async function bankClaimedHere(trx: Trx, bank: string): Promise<boolean> {
  const row = await trx.selectFrom('ledger').select('bank').where('bank', '=', bank).where('batch', '<>', '').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The columns of a stored docflow a page reads: whose it is, and since when its requirement stands (feed-page.ts follow). */
const PAGE_DOCFLOW_COLUMNS = ['docflow_id', 'bank', 'type', 'deal_id', 'n', 'request_id', 'req', 'req_at'] as const;

/** A stored docflow as a page reads it (the columns it rewrites stay in the database). */
export type PageDocflow = Pick<DocflowRow, (typeof PAGE_DOCFLOW_COLUMNS)[number]>;

/** The stored rows of the page's docflows, by id; compiled once per count of ids (src/db/compiled.ts). */
export async function readPageDocflows(trx: Trx, docflowIds: string[]): Promise<Map<string, PageDocflow>> {
  const docflows = new Map<string, PageDocflow>();
  if (docflowIds.length === 0) return docflows;
  const build = () => trx.selectFrom('docflows').select(PAGE_DOCFLOW_COLUMNS).where('docflow_id', 'in', docflowIds);
  const rows =
    docflowIds.length <= COMPILED_PAGE_MAX
      ? await runCompiled(trx, `pageDocflowsRead:${docflowIds.length}`, docflowIds, build)
      : await build().execute();
  for (const d of rows) docflows.set(d.docflow_id, d);
  return docflows;
}

/** The entry of a docflow of one of our deals the ledger did not hold; a row that claimed the deal meanwhile keeps it. */
export async function insertFoundEntry(trx: Trx, row: LedgerRow): Promise<void> {
  await trx
    .insertInto('ledger')
    .values(row)
    .onConflict((c) => c.columns(['bank', 'type', 'deal_id']).doNothing())
    .execute();
}

/** The docflows the page moved, as it left them, and each state it showed once. */
export async function writePageDocflows(trx: Trx, rows: DocflowRow[], history: HistoryRow[]): Promise<void> {
  await insertRows(trx, 'pageDocflows', rows, () =>
    trx
      .insertInto('docflows')
      .values(rows)
      .onConflict((c) =>
        c.column('docflow_id').doUpdateSet((eb) => ({
          st: eb.ref('excluded.st'),
          sat: eb.ref('excluded.sat'),
          req: eb.ref('excluded.req'),
          req_at: eb.ref('excluded.req_at'),
          uin: eb.ref('excluded.uin'),
          amt: eb.ref('excluded.amt'),
          payer: eb.ref('excluded.payer'),
          rerr: eb.ref('excluded.rerr'),
          files: eb.ref('excluded.files'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      ),
  );
  await insertRows(trx, 'pageHistory', history, () =>
    trx
      .insertInto('docflow_history')
      .values(history)
      .onConflict((c) => c.columns(['docflow_id', 'sat', 'st']).doNothing()),
  );
}

/** The feed's row as the page leaves it: its cursor moved on, its counters added to. */
export async function updateFeedRow(trx: Trx, set: Updateable<FeedTable>): Promise<void> {
  await trx.updateTable('feed').set(set).where('id', '=', 1).execute();
}

/**
 * A page's multi-row insert, compiled once per column set and row count (src/db/compiled.ts): every
 * page runs it, and building a statement of a hundred rows is most of what Kysely costs the
 * follower. Rows whose columns differ from the first row's, or more than COMPILED_PAGE_MAX of
 * them, are built as they come.
 */
async function insertRows(trx: Trx, name: string, rows: readonly object[], build: () => Compilable<unknown>): Promise<void> {
  const { columns } = columnsOf(rows[0]!);
  const values: unknown[] = [];
  for (const row of rows) {
    const of = columnsOf(row);
    if (of.columns !== columns || rows.length > COMPILED_PAGE_MAX) {
      await trx.executeQuery(build().compile());
      return;
    }
    for (const v of of.values) values.push(v);
  }
  await executeCompiled(trx, `${name}:${columns}:${rows.length}`, values, build);
}
