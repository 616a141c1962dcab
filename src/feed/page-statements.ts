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
import type { Selectable, Updateable } from 'kysely';
import type { Database, Trx } from '../db/database.js';
import type { DocflowHistoryTable, DocflowRow, FeedTable, LedgerRow } from '../db/schema.js';
import { columnsOf, executeCompiled, runCompiled } from '../db/compiled.js';
import type { NewsItem } from '../domain/gateway.js';
import { keyString, type LedgerKey } from '../ledger/rows.js';
import { COMPILED_PAGE_MAX, lockEntries, lockFastEntries, type FastEntry, type PageEntry } from './page-rows.js';

export type FeedRow = Selectable<FeedTable>;
export type HistoryRow = Selectable<DocflowHistoryTable>;

/** The feed's one row, locked until the page commits (PostgreSQL; SQLite's transaction holds the write lock already). */
export async function lockFeedRow(trx: Trx, lock: boolean): Promise<FeedRow | undefined> {
  const build = () => {
    const query = trx.selectFrom('feed').selectAll().where('id', '=', 1);
    return lock ? query.forUpdate() : query;
  };
  // Compiled once (src/db/compiled.ts): every page runs it.
  return (await runCompiled(trx, `lockFeedRow:${lock}`, [1], build))[0];
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

/**
 * What a page decides with: every deal's entry read narrowly (locked on PostgreSQL,
 * lockFastEntries); then, whole, the entries of the deals with an item of anything but the
 * docflow their submitted entry names (a lost answer, an older try, a second docflow, a deal the
 * ledger lacks), and the stored docflows of every item the narrow entries do not decide.
 */
export async function readPageRows(
  trx: Trx,
  db: Database,
  items: ReadonlyArray<{ item: NewsItem; ours: LedgerKey | undefined }>,
): Promise<{ fast: Map<string, FastEntry>; entries: Map<string, PageEntry>; docflows: Map<string, PageDocflow> }> {
  const fast = await lockFastEntries(
    trx,
    db,
    items.flatMap(({ ours }) => (ours ? [ours] : [])),
  );
  const keys = items.map(({ ours }) => ours && keyString(ours));
  const rest = new Map<string, LedgerKey>();
  items.forEach(({ item, ours }, i) => {
    const f = ours && fast.get(keys[i]!);
    if (ours && !(f && f.state === 'submitted' && f.docflow_id === item.docflow.docflowId)) rest.set(keys[i]!, ours);
  });
  for (const key of rest.keys()) fast.delete(key);
  const restDocflows = new Set<string>();
  items.forEach(({ item }, i) => {
    if (keys[i] === undefined || !fast.has(keys[i])) restDocflows.add(item.docflow.docflowId);
  });
  const entries = rest.size > 0 ? await lockEntries(trx, db, [...rest.values()]) : new Map<string, PageEntry>();
  return { fast, entries, docflows: await readPageDocflows(trx, [...restDocflows]) };
}

/** The entry of a docflow of one of our deals the ledger did not hold; a row that claimed the deal meanwhile keeps it. */
export async function insertFoundEntry(trx: Trx, row: LedgerRow): Promise<void> {
  await trx
    .insertInto('ledger')
    .values(row)
    .onConflict((c) => c.columns(['bank', 'type', 'deal_id']).doNothing())
    .execute();
}

/**
 * The columns of a docflow's row as a page writes it, in the order feed-page.ts follow() makes
 * them: every row has each of them (null where the item said nothing), so a page's rows are one
 * statement's values in this order, with no look at each row's keys.
 */
const DOCFLOW_COLUMNS = [
  'docflow_id',
  'bank',
  'type',
  'deal_id',
  'n',
  'request_id',
  'st',
  'sat',
  'req',
  'req_at',
  'uin',
  'amt',
  'payer',
  'rerr',
  'files',
  'updated_at',
] as const satisfies ReadonlyArray<keyof DocflowRow>;

/** The docflows the page moved, as it left them, and each state it showed once. */
export async function writePageDocflows(trx: Trx, rows: DocflowRow[], history: HistoryRow[]): Promise<void> {
  // Built (the first time per count, or for a long page) from the rows in DOCFLOW_COLUMNS' order: the values below are.
  const upsert = () =>
    trx
      .insertInto('docflows')
      .values(rows.map((row) => Object.fromEntries(DOCFLOW_COLUMNS.map((c) => [c, row[c]])) as DocflowRow))
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
      );
  const inserts = () =>
    trx
      .insertInto('docflow_history')
      .values(history.map(({ docflow_id, st, sat, seen_at }) => ({ docflow_id, st, sat, seen_at })))
      .onConflict((c) => c.columns(['docflow_id', 'sat', 'st']).doNothing());
  if (rows.length > COMPILED_PAGE_MAX || history.length > COMPILED_PAGE_MAX) {
    await upsert().execute();
    await inserts().execute();
    return;
  }
  // Compiled once per row count (src/db/compiled.ts): building a statement of a hundred rows is
  // most of what Kysely would cost the follower.
  const values: unknown[] = [];
  for (const row of rows) for (const column of DOCFLOW_COLUMNS) values.push(row[column]);
  await executeCompiled(trx, `pageDocflows:${rows.length}`, values, upsert);
  const states: unknown[] = [];
  for (const h of history) states.push(h.docflow_id, h.st, h.sat, h.seen_at);
  await executeCompiled(trx, `pageHistory:${history.length}`, states, inserts);
}

/** The feed's row as the page leaves it: its cursor moved on, its counters added to. */
export async function updateFeedRow(trx: Trx, set: Updateable<FeedTable>): Promise<void> {
  // Compiled once per set of columns (src/db/compiled.ts): every page runs it.
  const { columns, values } = columnsOf(set);
  values.push(1);
  await executeCompiled(trx, `updateFeedRow:${columns}`, values, () => trx.updateTable('feed').set(set).where('id', '=', 1));
}
