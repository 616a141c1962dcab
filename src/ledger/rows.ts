/**
 * The ledger's rows in the database: read (locked for the transaction), written, submitted,
 * released. Every function runs inside a caller's transaction (src/db/group-commit.ts); the
 * decisions that call them are in claim.ts, settle.ts and the feed's page (src/feed/feed-store.ts).
 */
import type { Engine, Trx } from '../db/database.js';
import type { LedgerRow, LedgerUpdate, NewLedgerRow } from '../db/schema.js';
import { propertyOf, requestIdOf, type DocflowType, type LedgerEntry, type LedgerState, type SubmittedDeal, type Via } from './entry.js';
import { columnsOf, executeCompiled, runCompiled } from '../db/compiled.js';

export interface LedgerKey {
  bank: string;
  type: DocflowType;
  dealId: string;
}

/** A key as one string: the group commit's sort order, and a map's key. */
export const keyString = (k: LedgerKey): string => `${k.bank}\u0000${k.type}\u0000${k.dealId}`;

/** Ledger keys in order: by bank, then type, then dealId (the order the group commit locks rows in). */
export const compareKeys = (a: LedgerKey, b: LedgerKey): number => {
  const [x, y] = [keyString(a), keyString(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

/** The earlier docflow a resubmission would replace, kept in `prev` until the new one exists. */
export interface PrevDocflow {
  n: number;
  docflowId: string;
  outcome: string;
  batch: string;
  row: number;
  at: string;
  via: Via;
  cn?: string | null;
  addr?: string | null;
  pf?: string | null;
}

/** The deal's row, locked until the transaction ends (PostgreSQL; SQLite's BEGIN IMMEDIATE holds the whole file). */
export async function lockRow(trx: Trx, engine: Engine, k: LedgerKey): Promise<LedgerRow | undefined> {
  // Compiled once: a claim and an outcome each run it (src/db/compiled.ts).
  const [row] = await runCompiled(trx, `lockRow:${engine}`, [k.bank, k.type, k.dealId], () => {
    const q = trx.selectFrom('ledger').selectAll().where('bank', '=', k.bank).where('type', '=', k.type).where('deal_id', '=', k.dealId);
    return engine === 'postgres' ? q.forUpdate() : q;
  });
  return row;
}

/**
 * Inserts a row the deal did not have; false when another transaction made it first (decide
 * again). Compiled once per set of columns (src/db/compiled.ts), as are updateRow and deleteRow.
 */
export async function insertRow(trx: Trx, row: NewLedgerRow): Promise<boolean> {
  const { columns, values } = columnsOf(row);
  const done = await executeCompiled(trx, `insertRow:${columns}`, values, () =>
    trx
      .insertInto('ledger')
      .values(row)
      .onConflict((c) => c.columns(['bank', 'type', 'deal_id']).doNothing()),
  );
  return Number(done.numAffectedRows ?? 0) > 0;
}

export async function updateRow(trx: Trx, k: LedgerKey, set: LedgerUpdate): Promise<void> {
  const { columns, values } = columnsOf(set);
  values.push(k.bank, k.type, k.dealId);
  await executeCompiled(trx, `updateRow:${columns}`, values, () =>
    trx.updateTable('ledger').set(set).where('bank', '=', k.bank).where('type', '=', k.type).where('deal_id', '=', k.dealId),
  );
}

export async function deleteRow(trx: Trx, k: LedgerKey): Promise<void> {
  await executeCompiled(trx, 'deleteRow', [k.bank, k.type, k.dealId], () =>
    trx.deleteFrom('ledger').where('bank', '=', k.bank).where('type', '=', k.type).where('deal_id', '=', k.dealId),
  );
}

/** A try's own columns, cleared: when it began and ended, its allowances, its run. */
export const NO_TRY = { try_at: null, end_at: null, timeout_ms: null, lag_ms: null, nonce: null } as const;

type Docflow = { docflowId: string; outcome: string; at: string; via: Via };

/** The deal reached the registry with this docflow (from the gateway's answer, the feed, or an operator). */
export async function submitRow(trx: Trx, k: LedgerKey, docflow: Docflow, now: number, extra: LedgerUpdate = {}): Promise<void> {
  await updateRow(trx, k, submitted(docflow, now, extra));
}

/**
 * submitRow for the row (`batch`, `row`) that made the docflow, in one statement, only while the
 * deal has no other docflow: false when it has another, or has no row, and nothing was written
 * (the caller reads the row and decides). PostgreSQL locks the row as `lockRow` would.
 */
export async function submitRowUnlessOther(
  trx: Trx,
  k: LedgerKey,
  docflow: Docflow,
  now: number,
  holder: { batch: string; row: number },
): Promise<boolean> {
  const set = submitted(docflow, now, holder);
  const { columns, values } = columnsOf(set);
  values.push(k.bank, k.type, k.dealId, 'submitted', docflow.docflowId);
  const done = await executeCompiled(trx, `submitRowUnlessOther:${columns}`, values, () =>
    trx
      .updateTable('ledger')
      .set(set)
      .where('bank', '=', k.bank)
      .where('type', '=', k.type)
      .where('deal_id', '=', k.dealId)
      .where((eb) => eb.or([eb('state', '<>', 'submitted'), eb('docflow_id', '=', docflow.docflowId)])),
  );
  return Number(done.numAffectedRows ?? 0) > 0;
}

/** A submitted row's columns: one object literal, no spreads (every outcome makes one). */
function submitted(docflow: Docflow, now: number, extra: LedgerUpdate): LedgerUpdate {
  const set: LedgerUpdate = {
    try_at: null,
    end_at: null,
    timeout_ms: null,
    lag_ms: null,
    nonce: null,
    prev: null,
    job: null,
    state: 'submitted',
    docflow_id: docflow.docflowId,
    outcome: docflow.outcome,
    at: docflow.at,
    via: docflow.via,
    // The feed's lag is measured from the answer (src/feed/feed-page.ts): only an answer's docflow has this time.
    answered_at: docflow.via === 'answer' ? now : null,
    updated_at: now,
  };
  return Object.assign(set, extra);
}

/** The holder's claim ends without a docflow: the deal is back to its earlier docflow (`prev`), or to nothing. */
export async function releaseRow(trx: Trx, k: LedgerKey, row: LedgerRow, now: number): Promise<void> {
  if (!row.prev) return deleteRow(trx, k);
  const p = JSON.parse(row.prev) as PrevDocflow;
  await updateRow(trx, k, {
    ...NO_TRY,
    prev: null,
    job: null,
    n: p.n,
    state: 'submitted',
    batch: p.batch,
    row: p.row,
    cn: p.cn ?? null,
    addr: p.addr ?? null,
    pf: p.pf ?? null,
    docflow_id: p.docflowId,
    outcome: p.outcome || 'queued',
    at: p.at || '',
    via: p.via || 'answer',
    answered_at: null,
    updated_at: now,
  });
}

/** The earlier docflow of a submitted row, as `prev` keeps it. */
export function prevOf(row: LedgerRow): PrevDocflow {
  return {
    n: row.n,
    docflowId: row.docflow_id ?? '',
    outcome: row.outcome ?? 'queued',
    batch: row.batch,
    row: row.row,
    at: row.at ?? '',
    via: (row.via as Via | null) ?? 'answer',
    cn: row.cn,
    addr: row.addr,
    pf: row.pf,
  };
}

/** A submitted row's (or a prev's) docflow as the claim's verdicts name it. */
export function dealOf(x: {
  docflow_id?: string | null;
  docflowId?: string;
  outcome?: string | null;
  batch: string;
  row: number;
  at?: string | null;
  /** A ledger row's key and try: the requestId that made its docflow (a results file's columns, for `ledger import`). */
  bank?: string;
  type?: string;
  deal_id?: string;
  n?: number;
}): SubmittedDeal {
  const deal: SubmittedDeal = {
    docflowId: (x.docflow_id ?? x.docflowId) || '',
    outcome: x.outcome === 'suspended' ? 'suspended' : 'queued',
    batch: x.batch,
    row: Number(x.row),
    at: x.at ?? '',
  };
  if (x.bank && x.type && x.deal_id !== undefined && x.n !== undefined) {
    deal.requestId = requestIdOf(x.bank, x.deal_id, Number(x.n), x.type as DocflowType);
    deal.type = x.type;
  }
  return deal;
}

/** Whether a docflow's entry (or its prev) was registered for another property than the one asking: two cadastral numbers decide. */
export function otherProperty(x: { cn?: string | null }, cn: string): boolean {
  return !!x.cn && cn !== '' && x.cn !== cn;
}

/**
 * Whether an entry is for the property a row names (its cadastral number, its canonical address's
 * digest): two cadastral numbers decide, else equal addresses. An entry that kept neither, or a
 * caller that names none, is taken as the same deal: nothing is a conflict on missing data.
 */
export function sameProperty(x: { cn?: string | null; addr?: string | null }, cn: string, addr: string): boolean {
  const xcn = x.cn ?? '';
  const xaddr = x.addr ?? '';
  if ((xcn === '' && xaddr === '') || (cn === '' && addr === '')) return true;
  if (xcn !== '' && cn !== '') return xcn === cn;
  return xaddr !== '' && xaddr === addr;
}

/** A row as the rest of the project reads an entry. */
export function entryOf(row: LedgerRow): LedgerEntry {
  const type = row.type as DocflowType;
  const entry: LedgerEntry = {
    dealId: row.deal_id,
    bank: row.bank,
    type,
    n: row.n,
    requestId: requestIdOf(row.bank, row.deal_id, row.n, type),
    state: row.state as LedgerState,
    batch: row.batch,
    row: row.row,
  };
  if (row.docflow_id) entry.docflowId = row.docflow_id;
  if (row.outcome) entry.outcome = row.outcome === 'suspended' ? 'suspended' : 'queued';
  if (row.at) entry.at = row.at;
  if (row.via) entry.via = row.via as Via;
  if (row.try_at !== null) entry.tryAt = Number(row.try_at);
  if (row.end_at !== null) entry.endAt = Number(row.end_at);
  const property = propertyOf(row.cn, row.addr);
  if (property) entry.property = property;
  return entry;
}
