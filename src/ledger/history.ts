/**
 * A deal found and told from the system of record alone, for the dashboard's `/deals` and
 * `/audit`: which ledger entries a dealId, a docflowId or a cadastral number names, one deal's
 * claim with its tries, every docflow it made with the states the feed showed, and what
 * operators did. Only the database is read: it holds no personal data (src/db/schema.ts), and
 * of its columns the ones derived from persons or addresses (`pf`, `addr`, a docflow's payer)
 * are never returned.
 */
import type { Database } from '../db/database.js';
import type { DocflowRow, LedgerRow } from '../db/schema.js';
import { listActions, type RecordedAction } from '../db/operator-actions.js';
import { DOCFLOW_TYPE_CODES, requestIdOf, type DocflowType } from './entry.js';
import { compareKeys, type PrevDocflow } from './rows.js';

/** At most this many deals answer one search, and this many actions show on one page. */
export const SEARCH_LIMIT = 100;
export const ACTIONS_LIMIT = 100;
/** A deal's docflows' history rows, all docflows together: a docflow sees a handful of states. */
export const HISTORY_LIMIT = 500;
/** The longest text a search takes (a dealId is at most 100 characters). */
export const MAX_QUERY_LENGTH = 200;

/** What a search matched the text against. */
export type MatchedBy = 'dealId' | 'docflowId' | 'cadastralNumber';

/** One deal a search found: its ledger entry as the list shows it (`state` null: the ledger has no entry, its docflow only). */
export interface DealMatch {
  bank: string;
  type: string;
  dealId: string;
  state: string | null;
  /** The resubmission number of its current (or last) try. */
  n: number | null;
  docflowId: string | null;
  batch: string | null;
  row: number | null;
  at: string | null;
  via: string | null;
  matchedBy: MatchedBy[];
}

export interface DealSearch {
  q: string;
  matches: DealMatch[];
  /** How many operator actions name dealId `q` (an action names no bank: its deal may be gone from the ledger). */
  actions: number;
  /** True when more than `limit` deals matched: the first `limit` (by bank, type, dealId) are listed. */
  cut: boolean;
  limit: number;
}

const ISO = (ms: number | null): string | null => (ms === null ? null : new Date(Number(ms)).toISOString());

/** The ledger's columns a search lists, in its order. */
const LISTED = ['bank', 'type', 'deal_id', 'state', 'n', 'docflow_id', 'batch', 'row', 'at', 'via', 'cn'] as const;

const dealKey = (x: { bank: string; type: string; deal_id: string }): string => `${x.bank}\u0000${x.type}\u0000${x.deal_id}`;

/**
 * The deals whose ledger entry has dealId `q`, docflow `q` or cadastral number `q`, or that made
 * docflow `q` (one a resubmission replaced: it is in `docflows`, no longer in the entry). A
 * docflow whose deal the ledger no longer has (released, or pruned) is listed with no state.
 */
export async function searchDeals(db: Database, text: string, limit = SEARCH_LIMIT): Promise<DealSearch> {
  const q = text.trim();
  if (q === '') return { q, matches: [], actions: 0, cut: false, limit };
  const docflows = await docflowsNaming(db, q, limit);
  const rows = await ledgerRowsNaming(db, q, docflows, limit);
  const matches = dealMatches(q, rows, docflows);
  const actions = await db.kysely
    .selectFrom('operator_actions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('deal_id', '=', q)
    .executeTakeFirst();
  return {
    q,
    matches: matches.slice(0, limit),
    actions: Number(actions?.n ?? 0),
    cut: matches.length > limit || rows.length > limit || docflows.length > limit,
    limit,
  };
}

type NamedDocflow = Pick<DocflowRow, 'bank' | 'type' | 'deal_id' | 'docflow_id'>;
type ListedRow = Pick<LedgerRow, (typeof LISTED)[number]>;

/** The docflows whose id or dealId is `q`, at most `limit` + 1 (one more tells the list was cut). */
async function docflowsNaming(db: Database, q: string, limit: number): Promise<NamedDocflow[]> {
  // docflow_id is the docflows' key: one row at most; a dealId names one row per bank and type.
  return db.kysely
    .selectFrom('docflows')
    .select(['bank', 'type', 'deal_id', 'docflow_id'])
    .where((eb) => eb.or([eb('docflow_id', '=', q), eb('deal_id', '=', q)]))
    .orderBy('bank')
    .orderBy('type')
    .orderBy('deal_id')
    .limit(limit + 1)
    .execute();
}

/** The ledger entries of dealId, docflow or cadastral number `q`, and those of the deal that made docflow `q`; at most `limit` + 1. */
async function ledgerRowsNaming(db: Database, q: string, docflows: NamedDocflow[], limit: number): Promise<ListedRow[]> {
  return db.kysely
    .selectFrom('ledger')
    .select([...LISTED])
    .where((eb) =>
      eb.or([
        eb('deal_id', '=', q),
        eb('docflow_id', '=', q),
        eb('cn', '=', q),
        ...docflows
          .filter((d) => d.docflow_id === q)
          .map((d) => eb.and([eb('bank', '=', d.bank), eb('type', '=', d.type), eb('deal_id', '=', d.deal_id)])),
      ]),
    )
    .orderBy('bank')
    .orderBy('type')
    .orderBy('deal_id')
    .limit(limit + 1)
    .execute();
}

/** One match a deal, by its key's order: its ledger entry's, or its docflow's alone when the ledger has none. */
function dealMatches(q: string, rows: ListedRow[], docflows: NamedDocflow[]): DealMatch[] {
  const madeDocflow = new Set(docflows.filter((d) => d.docflow_id === q).map(dealKey));
  const found = new Map<string, DealMatch>();
  for (const r of rows) {
    const matchedBy: MatchedBy[] = [];
    if (r.deal_id === q) matchedBy.push('dealId');
    if (r.docflow_id === q || madeDocflow.has(dealKey(r))) matchedBy.push('docflowId');
    if (r.cn === q) matchedBy.push('cadastralNumber');
    found.set(dealKey(r), {
      bank: r.bank,
      type: r.type,
      dealId: r.deal_id,
      state: r.state,
      n: Number(r.n),
      docflowId: r.docflow_id,
      batch: r.batch,
      row: Number(r.row),
      at: r.at,
      via: r.via,
      matchedBy,
    });
  }
  for (const d of docflows) {
    if (found.has(dealKey(d))) continue;
    found.set(dealKey(d), {
      bank: d.bank,
      type: d.type,
      dealId: d.deal_id,
      state: null,
      n: null,
      docflowId: d.docflow_id === q ? d.docflow_id : null,
      batch: null,
      row: null,
      at: null,
      via: null,
      matchedBy: [d.docflow_id === q ? 'docflowId' : 'dealId'],
    });
  }
  return [...found.values()].sort((a, b) =>
    compareKeys(
      { bank: a.bank, type: a.type as DocflowType, dealId: a.dealId },
      { bank: b.bank, type: b.type as DocflowType, dealId: b.dealId },
    ),
  );
}

/** The docflow a resubmission would replace, as the entry keeps it until the new one exists. */
export interface PrevView {
  n: number;
  docflowId: string;
  outcome: string;
  batch: string;
  row: number;
  at: string;
  via: string;
}

/** A deal's ledger entry: its claim, its try (times ISO 8601, from the database's clock), its docflow. */
export interface LedgerView {
  state: string;
  n: number;
  requestId: string;
  batch: string;
  row: number;
  /** The holder row's job (its BullMQ key: batch and dealId, no more). */
  job: string | null;
  tryAt: string | null;
  endAt: string | null;
  timeoutMs: number | null;
  lagMs: number | null;
  docflowId: string | null;
  outcome: string | null;
  at: string | null;
  via: string | null;
  cadastralNumber: string | null;
  prev: PrevView | null;
  updatedAt: string | null;
}

export interface DocflowStateSeen {
  state: string;
  /** The feed item's date. */
  at: string;
  /** When the follower saw it (database clock). */
  seenAt: string | null;
}

export interface DocflowView {
  docflowId: string;
  n: number;
  requestId: string;
  state: string | null;
  stateAt: string | null;
  requirement: string | null;
  requirementAt: string | null;
  paymentUin: string | null;
  paymentAmount: string | null;
  /** The registry's error, masked by the feed. */
  registryError: string | null;
  resultFiles: number | null;
  updatedAt: string | null;
  history: DocflowStateSeen[];
}

export interface DealHistory {
  bank: string;
  type: string;
  dealId: string;
  /** Null when the ledger has no entry (never claimed, released, or pruned). */
  ledger: LedgerView | null;
  /** Oldest try first. */
  docflows: DocflowView[];
  /** Newest first; of this dealId (actions name no bank). */
  actions: RecordedAction[];
  /** Lists cut at their limits. */
  cut: { history: boolean; actions: boolean };
}

function prevView(raw: string | null): PrevView | null {
  if (!raw) return null;
  try {
    const p = JSON.parse(raw) as Partial<PrevDocflow>;
    return {
      n: Number(p.n ?? 0),
      docflowId: String(p.docflowId ?? ''),
      outcome: String(p.outcome ?? ''),
      batch: String(p.batch ?? ''),
      row: Number(p.row ?? 0),
      at: String(p.at ?? ''),
      via: String(p.via ?? ''),
    };
  } catch {
    return null;
  }
}

function ledgerView(r: LedgerRow): LedgerView {
  // A row of a type requestIdOf does not know shows no requestId rather than a wrong one.
  const known = Object.hasOwn(DOCFLOW_TYPE_CODES, r.type);
  return {
    state: r.state,
    n: Number(r.n),
    requestId: known ? requestIdOf(r.bank, r.deal_id, Number(r.n), r.type as DocflowType) : '',
    batch: r.batch,
    row: Number(r.row),
    job: r.job,
    tryAt: ISO(r.try_at),
    endAt: ISO(r.end_at),
    timeoutMs: r.timeout_ms === null ? null : Number(r.timeout_ms),
    lagMs: r.lag_ms === null ? null : Number(r.lag_ms),
    docflowId: r.docflow_id,
    outcome: r.outcome,
    at: r.at,
    via: r.via,
    cadastralNumber: r.cn,
    prev: prevView(r.prev),
    updatedAt: ISO(r.updated_at),
  };
}

/**
 * Everything the database knows of one deal; undefined when neither the ledger nor the docflows
 * know it (the operator actions alone name no bank nor type: `/audit?dealId=` lists them).
 */
export async function dealHistory(db: Database, bank: string, type: string, dealId: string): Promise<DealHistory | undefined> {
  const entry = await db.kysely
    .selectFrom('ledger')
    .selectAll()
    .where('bank', '=', bank)
    .where('type', '=', type)
    .where('deal_id', '=', dealId)
    .executeTakeFirst();
  const docflowRows = await db.kysely
    .selectFrom('docflows')
    .select(['docflow_id', 'n', 'request_id', 'st', 'sat', 'req', 'req_at', 'uin', 'amt', 'rerr', 'files', 'updated_at'])
    .where('bank', '=', bank)
    .where('type', '=', type)
    .where('deal_id', '=', dealId)
    .orderBy('n')
    .orderBy('docflow_id')
    .execute();
  const historyRows =
    docflowRows.length === 0
      ? []
      : await db.kysely
          .selectFrom('docflow_history')
          .selectAll()
          .where(
            'docflow_id',
            'in',
            docflowRows.map((d) => d.docflow_id),
          )
          .orderBy('seen_at')
          .orderBy('sat')
          .limit(HISTORY_LIMIT + 1)
          .execute();
  if (!entry && docflowRows.length === 0) return undefined;
  const actions = await listActions(db, { dealId, limit: ACTIONS_LIMIT + 1 });

  const seen = new Map<string, DocflowStateSeen[]>();
  for (const h of historyRows.slice(0, HISTORY_LIMIT)) {
    const list = seen.get(h.docflow_id) ?? [];
    list.push({ state: h.st, at: h.sat, seenAt: ISO(h.seen_at) });
    seen.set(h.docflow_id, list);
  }
  const docflows = docflowRows.map((d): DocflowView => ({
    docflowId: d.docflow_id,
    n: Number(d.n),
    requestId: d.request_id,
    state: d.st,
    stateAt: d.sat,
    requirement: d.req,
    requirementAt: d.req_at,
    paymentUin: d.uin,
    paymentAmount: d.amt,
    registryError: d.rerr,
    resultFiles: d.files === null ? null : Number(d.files),
    updatedAt: ISO(d.updated_at),
    history: seen.get(d.docflow_id) ?? [],
  }));
  return {
    bank,
    type,
    dealId,
    ledger: entry ? ledgerView(entry) : null,
    docflows,
    actions: actions.slice(0, ACTIONS_LIMIT),
    cut: { history: historyRows.length > HISTORY_LIMIT, actions: actions.length > ACTIONS_LIMIT },
  };
}

export interface AuditPage {
  /** Newest first. */
  actions: RecordedAction[];
  /** The `before` of the next (older) page; null on the last. */
  next: number | null;
}

/** Operator actions newest first, `limit` a page, older than action `before` when given, of one dealId when asked. */
export async function auditPage(db: Database, options: { before?: number; limit?: number; dealId?: string } = {}): Promise<AuditPage> {
  const limit = options.limit ?? ACTIONS_LIMIT;
  let q = db.kysely
    .selectFrom('operator_actions')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (options.before !== undefined) q = q.where('id', '<', options.before);
  if (options.dealId !== undefined) q = q.where('deal_id', '=', options.dealId);
  const rows = await q.execute();
  const actions = rows
    .slice(0, limit)
    .map((r) => ({ id: Number(r.id), at: r.at, who: r.who, action: r.action, batch: r.batch, dealId: r.deal_id, detail: r.detail }));
  return { actions, next: rows.length > limit ? actions[actions.length - 1]!.id : null };
}
