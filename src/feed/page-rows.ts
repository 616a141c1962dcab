/**
 * The ledger rows a news feed page reads and writes (feed-page.ts decides the page): its deals'
 * rows locked in key order, the entry of a docflow the ledger did not know, and text made
 * well-formed for both engines.
 */
import type { Database, Trx } from '../db/database.js';
import type { LedgerRow } from '../db/schema.js';
import type { DocflowType } from '../ledger/entry.js';
import { keyString, NO_TRY, type LedgerKey } from '../ledger/rows.js';
import { sql, type Compilable } from 'kysely';
import { runCompiled } from '../db/compiled.js';
import type { NewsItem } from '../domain/gateway.js';

/**
 * A row with each lone UTF-16 surrogate (half an emoji, from any text of the gateway's) as U+FFFD:
 * PostgreSQL's driver writes it so, better-sqlite3 writes its bytes as they are, which are not
 * UTF-8 and would read back as three replacement characters. Both engines keep the same text.
 * (String.prototype.toWellFormed: Node 20 has it, the ES2023 lib not yet; it returns a
 * well-formed string as it is.) Changed in place and returned: every caller gives a row it has
 * just made, and a page makes one for each of its items (a copy of each was a tenth of the
 * page's own JavaScript, docs/performance.md).
 */
export function wellFormedRow<T extends object>(row: T): T {
  const fields = row as Record<string, unknown>;
  for (const k in fields) {
    const v = fields[k];
    if (typeof v === 'string') fields[k] = (v as string & { toWellFormed(): string }).toWellFormed();
  }
  return row;
}

/**
 * The most items a page's statements are compiled once for (one statement per length, kept for
 * the process's life); a longer page, which the gateway sends rarely if ever, is built each time.
 */
export const COMPILED_PAGE_MAX = 128;

/**
 * The columns of a ledger row a page decides with: a page reads up to a hundred rows, and on
 * SQLite making each row's object costs more than finding it, so the columns it never reads
 * (the try's times, the property, the name filter) stay in the database. A page that rewrites a
 * row leaves those as they are (takeOfEntry).
 */
export const PAGE_ENTRY_COLUMNS = [
  'bank',
  'type',
  'deal_id',
  'n',
  'state',
  'batch',
  'row',
  'job',
  'docflow_id',
  'via',
  'prev',
  'answered_at',
] as const;

/** A ledger row as a page reads it. */
export type PageEntry = Pick<LedgerRow, (typeof PAGE_ENTRY_COLUMNS)[number]>;

/** A page's keys as the reads' IN lists (each value once) and as keyStrings. */
function keyLists(keys: LedgerKey[]): { wanted: Set<string>; banks: string[]; types: string[]; dealIds: string[] } {
  return {
    wanted: new Set(keys.map(keyString)),
    banks: [...new Set(keys.map((k) => k.bank))],
    types: [...new Set(keys.map((k) => k.type))],
    dealIds: [...new Set(keys.map((k) => k.dealId))],
  };
}

/**
 * A page's read by its key lists (the builder's parameters, in order: banks, types, dealIds),
 * compiled once per list lengths (src/db/compiled.ts): every page runs it. A list longer than
 * COMPILED_PAGE_MAX is built each time.
 */
async function readByKeys<R>(
  trx: Trx,
  name: string,
  { banks, types, dealIds }: { banks: string[]; types: string[]; dealIds: string[] },
  build: () => Compilable<R> & { execute(): Promise<R[]> },
): Promise<R[]> {
  if (dealIds.length > COMPILED_PAGE_MAX) return build().execute();
  return runCompiled(trx, `${name}:${banks.length}:${types.length}:${dealIds.length}`, [...banks, ...types, ...dealIds], build);
}

/** The ledger rows of a page's deals, locked (PostgreSQL) in key order. */
export async function lockEntries(trx: Trx, db: Database, keys: LedgerKey[]): Promise<Map<string, PageEntry>> {
  const found = new Map<string, PageEntry>();
  if (keys.length === 0) return found;
  const { wanted, banks, types, dealIds } = keyLists(keys);
  const build = () => {
    const q = trx
      .selectFrom('ledger')
      .select(PAGE_ENTRY_COLUMNS)
      .where('bank', 'in', banks)
      .where('type', 'in', types)
      .where('deal_id', 'in', dealIds)
      .orderBy('bank')
      .orderBy('type')
      .orderBy('deal_id');
    return db.engine === 'postgres' ? q.forUpdate() : q;
  };
  const rows = await readByKeys(trx, 'lockEntries', { banks, types, dealIds }, build);
  for (const row of rows) {
    const key = keyString({ bank: row.bank, type: row.type as DocflowType, dealId: row.deal_id });
    if (wanted.has(key)) found.set(key, row);
  }
  return found;
}

/**
 * The common item's entry, as a page first reads it: a deal whose try is submitted with the
 * item's docflow, and what the page needs of that docflow as stored (whether it is, and its
 * requirement since when). An item whose entry is anything else is read again whole
 * (lockEntries, readPageDocflows).
 */
export interface FastEntry {
  state: string;
  docflow_id: string | null;
  answered_at: number | null;
  /** The entry's docflow is in `docflows` (1 or true), or not. */
  known: number | boolean;
  req: string | null;
  req_at: string | null;
}

/**
 * The ledger rows of a page's deals, locked (PostgreSQL) in key order, each with its docflow's
 * stored requirement: the columns the common item decides with and no more. On SQLite a row's
 * object costs more than finding it; the whole rows and docflows of the rarer items are read
 * after this, by the same keys (docs/performance.md). The bank and the type are read only when
 * the page has more than one of either.
 */
export async function lockFastEntries(trx: Trx, db: Database, keys: LedgerKey[]): Promise<Map<string, FastEntry>> {
  const found = new Map<string, FastEntry>();
  if (keys.length === 0) return found;
  const { wanted, banks, types, dealIds } = keyLists(keys);
  const one = banks.length === 1 && types.length === 1;
  const build = () => {
    const q = trx
      .selectFrom('ledger as l')
      .leftJoin('docflows as d', 'd.docflow_id', 'l.docflow_id')
      .select([
        'l.deal_id',
        'l.state',
        'l.docflow_id',
        'l.answered_at',
        'd.req',
        'd.req_at',
        sql<number | boolean>`d.docflow_id is not null`.as('known'),
      ])
      .$if(!one, (b) => b.select(['l.bank', 'l.type']))
      .where('l.bank', 'in', banks)
      .where('l.type', 'in', types)
      .where('l.deal_id', 'in', dealIds)
      .orderBy('l.bank')
      .orderBy('l.type')
      .orderBy('l.deal_id');
    return db.engine === 'postgres' ? q.forUpdate('l') : q;
  };
  type Row = FastEntry & { deal_id: string; bank?: string; type?: string };
  const rows: Row[] = await readByKeys(trx, 'lockFastEntries', { banks, types, dealIds }, build);
  for (const row of rows) {
    const key = keyString({ bank: row.bank ?? banks[0]!, type: (row.type ?? types[0]!) as DocflowType, dealId: row.deal_id });
    if (wanted.has(key))
      found.set(key, {
        state: row.state,
        docflow_id: row.docflow_id,
        answered_at: row.answered_at,
        known: row.known,
        req: row.req,
        req_at: row.req_at,
      });
  }
  return found;
}

/** Whether the entry's `prev` (the docflow a resubmission would replace) is this docflow. */
export function prevNames(e: Pick<LedgerRow, 'prev'>, docflowId: string): boolean {
  return e.prev !== null && (JSON.parse(e.prev) as { docflowId?: string }).docflowId === docflowId;
}

/** The entry of a docflow the feed found for a deal the ledger did not know: no row holds it. */
export function newEntry(ours: LedgerKey & { n: number }, docflowId: string, item: NewsItem, now: number): LedgerRow {
  return {
    bank: ours.bank,
    type: ours.type,
    deal_id: ours.dealId,
    n: ours.n,
    state: 'submitted',
    batch: '',
    row: 0,
    job: null,
    ...NO_TRY,
    docflow_id: docflowId,
    outcome: item.docflow.state === 'suspended' ? 'suspended' : 'queued',
    at: item.date,
    via: 'feed',
    answered_at: null,
    judged_at: null,
    cn: null,
    addr: null,
    pf: null,
    prev: null,
    updated_at: now,
  };
}
